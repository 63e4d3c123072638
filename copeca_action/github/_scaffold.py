"""`copeca-action init`: a starting benchmark for a user's tool, ready to validate and run.

It writes a small corpus (a pinned repository, one task, the baseline mode and a mode of the
integration kind named), a scenario comparing them, and a pull-request workflow that runs
this action. Existing files are never overwritten.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import jinja2
import yaml

from copeca_action._util.paths import corpus_dir
from copeca_action.errors import ConfigError, Problem
from copeca_action.github import _pins

Kind = Literal["mcp", "env", "hook", "wrapper", "setup"]
KINDS: tuple[str, ...] = ("mcp", "env", "hook", "wrapper", "setup")
STARTER_TASK = "fastapi/locate-unique-id"
"""The bundled task copied as an example (its repository is an offline sdist pin)."""
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


def _render(template: str, **values: object) -> str:
    env = jinja2.Environment(loader=jinja2.PackageLoader("copeca_action.github",
                                                         "templates/init"),
                             autoescape=False, undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    return env.get_template(template).render(**values)


def _starter_files() -> dict[str, str]:
    """The example task and the repository pin it needs, from the bundled corpus."""
    src = corpus_dir()
    repo, task_name = STARTER_TASK.split("/")
    repos = yaml.safe_load((src / "repos.yaml").read_text())
    pin = {"repos": {repo: repos["repos"][repo]}}
    header = ("# Repositories the tasks run on, each pinned (sdist: name + version + sha256;\n"
              "# git: a 40-hex commit). Add your own; see docs/task-authoring.md.\n")
    return {
        "repos.yaml": header + yaml.safe_dump(pin, sort_keys=False),
        f"tasks/{repo}/{task_name}.yaml": (src / "tasks" / repo / f"{task_name}.yaml")
        .read_text(),
    }


def scaffold(target: Path, kind: str, name: str = "my-tool", action: str = _pins.ACTION,
             bench_dir: str = "benchmark") -> list[Path]:
    """Write the benchmark and workflow under `target`; return the files written."""
    problems = []
    if kind not in KINDS:
        problems.append(Problem("--kind", f"expected one of {', '.join(KINDS)}; got {kind!r}"))
    if not _NAME.match(name):
        problems.append(Problem("--name", "expected lowercase letters, digits, '.', '_' or "
                                f"'-' (a mode name); got {name!r}"))
    if problems:
        raise ConfigError(problems)
    values = {"kind": kind, "name": name, "bench": bench_dir, "action": action,
              "checkout": _pins.CHECKOUT, "upload": _pins.UPLOAD_ARTIFACT,
              "prefix": f"mcp__{name}__"}
    bench = target / bench_dir
    files: dict[Path, str] = {bench / rel: text for rel, text in _starter_files().items()}
    files[bench / "modes" / "baseline.yaml"] = _render("baseline.yaml.j2", **values)
    files[bench / "modes" / f"{name}.yaml"] = _render(f"mode-{kind}.yaml.j2", **values)
    files[bench / "scenarios" / "pr.yaml"] = _render("scenario.yaml.j2", **values)
    files[target / ".github" / "workflows" / "copeca.yml"] = _render("workflow.yml.j2",
                                                                     **values)
    existing = [p for p in files if p.exists()]
    if existing:
        raise ConfigError([Problem(str(p), "already exists; init never overwrites (remove it "
                                   "or pick another DIR)") for p in existing])
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(files)
