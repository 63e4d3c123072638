"""The names of a `.copeca` bundle's members and the rule for member paths: what reading
a bundle's structure needs, without the pydantic models of its contents (so hashing can start
before they are imported)."""

from __future__ import annotations

import re

MANIFEST = "manifest.json"
STATEMENT = "statement.json"
ENVELOPE = "statement.dsse.json"
METADATA = (MANIFEST, STATEMENT, ENVELOPE)
"""Files the manifest cannot list (they describe it); the signature covers them instead."""

SCENARIO = "scenario.yaml"
PLAN = "plan.json"
RESULTS = "results.jsonl"
REPORT_FILES = ("report.json", "report.md", "report.html")
RUNS_DIR = "runs"
RECORD = "record.json"
ATTEMPTS_DIR = "attempts"
"""attempts/<run id>/<attempt>-<started>/: an earlier attempt of a run (retried, or one the
harness died during), its record.json (a superseded line of results.jsonl) and its output:
the evidence behind the spend of attempts outside the statistics."""
OMITTED = "omitted.json"
"""In an attempt's folder: the files left out for their size (name, size, why), when any."""

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://copeca-action.dev/bundle/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"

_COMPONENT = re.compile(r"^[A-Za-z0-9@+=_-][A-Za-z0-9@+=._-]{0,127}\Z")


def check_member_path(path: str) -> str | None:
    """Why `path` may not be a bundle member, or None: relative, '/'-separated, no empty,
    '.' or '..' parts, only a conservative character set, at most 8 levels deep."""
    if not path or len(path) > 512:
        return "empty or longer than 512 characters"
    if path.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", path):
        return "an absolute path"
    parts = path.split("/")
    if ".." in parts or any("\\" in p for p in parts):
        return "a path that climbs out ('..' or a backslash)"
    if len(parts) > 8:
        return "nested more than 8 levels"
    for part in parts:
        if not _COMPONENT.match(part) or part in (".",):
            return f"a path part {part!r} outside [A-Za-z0-9@+=._-] (or empty, or '.')"
    return None
