"""A small, real world for reuse tests: a corpus with two tasks, a baseline and a tool mode
that names `{tool_dir}`, the fake agent behind a runner that reports a version, a git
checkout of the tool, and a signing key. Runs go through the real `copeca-action run`."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from engine_helpers import fake, make_corpus, write

from copeca_action.agent._binary import _version
from copeca_action.cli import main
from copeca_action.records import RunRecord, read_records

SCENARIO = {"name": "s", "tasks": {"include": ["app/*"]}, "modes": ["baseline", "tool"],
            "models": ["fake-model"], "model_runner_map": {"fake-model": "fake"},
            "repetitions": 1, "timeout_s": 30, "workers": 2, "seed": 3,
            "thresholds": {"min_runs": 1}}


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), "-c", "user.name=t", "-c", "user.email=t@e.invalid",
                    *args], check=True, capture_output=True)


def pem(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


@dataclass
class World:
    root: Path
    corpus: Path
    tool: Path
    key: Path
    private: Ed25519PrivateKey

    @property
    def scenario(self) -> Path:
        return self.corpus / "scenarios" / "s.yaml"

    @property
    def runner(self) -> Path:
        return self.root / "runners" / "fake.yaml"

    def set_version(self, version: str) -> None:
        """The CLI reports `version` from now on (the probe's cache is cleared: the probe
        runs once per process and binary, as in the action)."""
        wrapper = self.root / "runners" / "fake-versioned"
        wrapper.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo "
                           f"'{version} (Fake Code)'; exit 0; fi\n"
                           f"exec {self.root / 'runners' / 'fake-agent'} \"$@\"\n")
        wrapper.chmod(0o755)
        data = yaml.safe_load(self.runner.read_text())
        data["binary"] = str(wrapper)
        write(self.runner, data)
        _version.cache_clear()

    def edit_tool(self, text: str, commit: bool = True) -> None:
        (self.tool / "server.py").write_text(text)
        if commit:
            _git(self.tool, "commit", "-qam", "change")

    def edit_yaml(self, path: Path, **changes: Any) -> None:
        data = yaml.safe_load(path.read_text())
        data.update(changes)
        write(path, data)

    def run(self, out: str, *extra: str) -> int:
        return main(["run", str(self.scenario), "--out", str(self.root / out), "--cache",
                     str(self.root / "cache"), "--tool-dir", str(self.tool), "--key",
                     str(self.key), "--plain", *extra])

    def bundle(self, out: str) -> Path:
        return self.root / out / "s.copeca"

    def records(self, out: str) -> list[RunRecord]:
        return read_records(self.root / out / "results.jsonl")

    def report(self, out: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.root / out / "report.json").read_text())
        return data


def make_world(root: Path) -> World:
    corpus = make_corpus(root, {
        "one": {"prompt": fake(answer="It returns 42.", cost=0.5)},
        "two": {"prompt": fake(answer="42 it is.", cost=0.5)},
    }, modes={"tool": {"env": {"TOOL_HOME": "{tool_dir}"}}})
    write(corpus / "scenarios" / "s.yaml", SCENARIO)
    tool = root / "tool"
    tool.mkdir()
    _git(tool, "init", "-q", "-b", "main")
    (tool / "server.py").write_text("print('v1')\n")
    _git(tool, "add", ".")
    _git(tool, "commit", "-qm", "v1")
    private = Ed25519PrivateKey.generate()
    key = root / "signing.pem"
    key.write_bytes(pem(private))
    world = World(root=root, corpus=corpus, tool=tool, key=key, private=private)
    world.set_version("1.2.3")
    return world
