"""`copeca-action eval --backend docker` end to end on podman, with a busybox image."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from copeca_action.cli import main


def git(cwd: Path, *argv: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *argv], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout


def diff(repo: Path, tmp: Path, name: str, edits: dict[str, str]) -> str:
    work = tmp / name
    git(tmp, "clone", "-q", str(repo), str(work))
    for rel, text in edits.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    git(work, "add", "-A")
    return git(work, "diff", "--cached")


@pytest.mark.container
def test_eval_with_the_docker_backend(docker_host: str, busybox_image: str, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch, docker_client: Any) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "app.txt").write_text("colour = red\nsize = small\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    corpus = tmp_path / "corpus"
    (corpus / "tasks/app/t").mkdir(parents=True)
    (corpus / "repos.yaml").write_text("repos:\n  app:\n    language: shell\n"
                                       "    local: {path: .}\n")
    checks = {1: "grep -q 'colour = blue' app.txt", 2: "grep -q 'size = large' app.txt"}
    for n, check in checks.items():
        (corpus / f"tasks/app/t/tests_{n}.patch").write_text(
            # a pass needs a test runner's summary (TAP counts), not only exit 0
            diff(repo, tmp_path, f"t{n}", {f"tests/check_{n}.sh": (
                f"if {check}; then r=1; else r=0; fi\n"
                "printf '# tests 1\\n# pass %d\\n# fail %d\\n' $r $((1 - r))\n"
                "exit $((1 - r))\n")}))
        (corpus / f"tasks/app/t/f{n}.yaml").write_text(
            f"id: app/t/f{n}\nrepo: app\ntype: edit\ncategory: fix\nlanguage: shell\n"
            "prompt: Change the settings file as the feature asks.\nsource: {origin: original}\n"
            f"grading:\n  patch:\n    tests_patch: tests_{n}.patch\n"
            f"    command: [sh, tests/check_{n}.sh]\n    timeout_s: 60\n")
    logs = tmp_path / "logs/exp"
    runs = {"solo/app/t/f1_f2/solo.patch": "colour = blue\nsize = large\n",
            "coop/app/t/f1_f2/agent1.patch": "colour = blue\nsize = small\n",
            "coop/app/t/f1_f2/agent2.patch": "colour = red\nsize = large\n"}
    for rel, text in runs.items():
        edits = {"app.txt": text}
        (logs / rel).parent.mkdir(parents=True, exist_ok=True)
        (logs / rel).write_text(diff(repo, tmp_path, rel.replace("/", "_"), edits))
    monkeypatch.setenv("DOCKER_HOST", docker_host)
    before = {c.id for c in docker_client.containers.list(all=True)}
    code = main(["eval", "-n", "exp", "--logs", str(tmp_path / "logs"), "--corpus", str(corpus),
                 "--repo-dir", str(repo), "--backend", "docker", "--image", busybox_image,
                 "-c", "2"])
    assert code == 0
    solo = json.loads((logs / "solo/app/t/f1_f2/eval.json").read_text())
    assert solo["both_passed"] and solo["backend"] == "docker"
    assert "network-none" in solo["isolation"]
    coop = json.loads((logs / "coop/app/t/f1_f2/eval.json").read_text())
    # Adjacent lines changed by both agents: git reports a conflict; the union keeps both
    # versions of each line, so the checks (grep) pass on the union tree.
    assert coop["merge"]["status"] == "conflict" and coop["merge"]["strategy"] == "union"
    assert {c.id for c in docker_client.containers.list(all=True)} <= before
