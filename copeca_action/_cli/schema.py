"""`copeca-action schema [--out DIR] [--check]`: JSON Schemas generated from the models."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from copeca_action.plan import RunPlan
from copeca_action.records import RunRecord
from copeca_action.scenario import Mode, RepoIndex, Runner, Scenario, Task
from copeca_action.scripted import ScriptFile

SCHEMAS: dict[str, type[BaseModel]] = {
    "task": Task, "scenario": Scenario, "mode": Mode, "runner": Runner, "repos": RepoIndex,
    "run-record": RunRecord, "run-plan": RunPlan, "scripts": ScriptFile,
}


def schema_text(model: type[BaseModel]) -> str:
    schema: dict[str, Any] = model.model_json_schema()
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("schema", help="write (or check) the JSON Schemas of every contract")
    p.add_argument("--out", type=Path, default=Path("schemas"))
    p.add_argument("--check", action="store_true", help="exit 1 when --out differs")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    stale = []
    args.out.mkdir(parents=True, exist_ok=True)
    for name, model in SCHEMAS.items():
        path = args.out / f"{name}.schema.json"
        text = schema_text(model)
        if args.check:
            if not path.is_file() or path.read_text() != text:
                stale.append(str(path))
        else:
            path.write_text(text)
    if stale:
        print("stale schemas (run `copeca-action schema --out schemas`): " + ", ".join(stale),
              file=sys.stderr)
        return 1
    print(f"{len(SCHEMAS)} schemas {'up to date' if args.check else 'written'} in {args.out}")
    return 0
