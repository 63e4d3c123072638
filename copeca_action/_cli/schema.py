"""`copeca-action schema [--out DIR] [--check]`: JSON Schemas generated from the models."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from copeca_action._cli._docgen import reference_page
from copeca_action._util.docstrings import describe_fields
from copeca_action.bundle import Envelope, Manifest, Statement
from copeca_action.plan import RunPlan
from copeca_action.records import RunRecord
from copeca_action.report import Report
from copeca_action.retrieval import RunRetrieval
from copeca_action.scenario import Mode, RepoIndex, Runner, Scenario, Task
from copeca_action.scripted import ScriptFile

SCHEMAS: dict[str, type[BaseModel]] = {
    "task": Task,
    "scenario": Scenario,
    "mode": Mode,
    "runner": Runner,
    "repos": RepoIndex,
    "run-record": RunRecord,
    "run-plan": RunPlan,
    "run-retrieval": RunRetrieval,
    "report": Report,
    "bundle-manifest": Manifest,
    "bundle-statement": Statement,
    "bundle-envelope": Envelope,
    "scripts": ScriptFile,
}
DOC_TITLES = {"task": "Task", "scenario": "Scenario", "mode": "Mode", "runner": "Runner",
              "repos": "Repository pins (corpus/repos.yaml)", "run-record": "RunRecord"}


def generated_files(out: Path, docs: Path | None) -> dict[Path, str]:
    """Every generated file and its expected text."""
    files = {out / f"{name}.schema.json": schema_text(model) for name, model in SCHEMAS.items()}
    if docs is not None:
        files.update({docs / f"{name}.md": reference_page(title, SCHEMAS[name])
                      for name, title in DOC_TITLES.items()})
    return files


def schema_text(model: type[BaseModel]) -> str:
    describe_fields([model])
    schema: dict[str, Any] = model.model_json_schema()
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("schema", help="write (or check) the JSON Schemas of every contract",
                       description="Write the JSON Schema of each input and output format "
                       "(scenario, task, mode, runner, run record, …) into a folder, or check "
                       "that the folder is current.")
    p.add_argument("--out", type=Path, default=Path("schemas"),
                   help="output folder for the schemas (default schemas)")
    p.add_argument("--docs", type=Path, help="also write markdown reference pages here")
    p.add_argument("--check", action="store_true", help="exit 1 when --out differs")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    stale = []
    files = generated_files(args.out, args.docs)
    for path, text in files.items():
        if args.check:
            if not path.is_file() or path.read_text() != text:
                stale.append(str(path))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    if stale:
        print("stale (run `copeca-action schema --out schemas --docs docs/reference`): "
              + ", ".join(stale), file=sys.stderr)
        return 1
    print(f"{len(files)} files {'up to date' if args.check else 'written'}")
    return 0
