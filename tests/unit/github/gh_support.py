"""Helpers for the GitHub layer's tests: real webhook payloads, a fork variant, outputs."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from fake_github import PAYLOADS

TOKEN = "test-token-123"

def payload(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((PAYLOADS / f"{name}.json").read_text())
    return data


def fork_payload() -> dict[str, Any]:
    """pull_request.opened from a fork: the head repo is someone else's (contracts README)."""
    data = copy.deepcopy(payload("pull_request.opened"))
    head = data["pull_request"]["head"]
    head["repo"]["full_name"] = "mallory/Hello-World"
    head["repo"]["name"] = "Hello-World"
    head["repo"]["owner"]["login"] = "mallory"
    head["repo"]["fork"] = True
    head["label"] = "mallory:changes"
    return data


def parse_outputs(path: Path) -> dict[str, str]:
    """Read a $GITHUB_OUTPUT file the way the runner does (name<<DELIM blocks)."""
    out: dict[str, str] = {}
    lines = path.read_text().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line:
            name, delim = line.split("<<", 1)
            end = lines.index(delim, i + 1)
            out[name] = "\n".join(lines[i + 1:end])
            i = end + 1
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
            i += 1
        else:
            i += 1
    return out
