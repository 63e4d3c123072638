"""`copeca-action init`: a starting benchmark for a user's tool that can reach a verdict.

It writes a small corpus (a pinned repository, tasks that need to find things in the code,
five or more control tasks, the baseline mode and a mode of the integration kind named), a
scenario with enough repetitions for the minimum runs per arm, a working stub of the tool
(so the first dry run exercises the whole path), scripts for that dry run, and a workflow
pinned to this package's own version. Existing files are never overwritten.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import jinja2
import yaml

from copeca_action._util.paths import corpus_dir
from copeca_action.errors import ConfigError, Problem
from copeca_action.github import _pins

Kind = Literal["mcp", "env", "hook", "wrapper", "setup"]
KINDS: tuple[str, ...] = ("mcp", "env", "hook", "wrapper", "setup")
STARTER_REPO = "fastapi"
"""The bundled repository the scaffold's tasks run on (an offline sdist pin)."""
STARTER_TASKS = ("locate-unique-id", "locate-solve-dependencies", "locate-docs-routes",
                 "trace-http-exception-body", "trace-include-router-prefix",
                 "reason-endpoint-threadpool")
"""Tasks copied as examples: finding things in the code, which a code tool may make cheaper."""
MIN_CONTROLS = 5
REPETITIONS = 3
MIN_RUNS = 6
"""The scenario's `thresholds.min_runs`: tasks × repetitions per arm must reach it. The
interval is clustered by task, so a verdict needs several tasks, not only many repetitions:
with three tasks even a clear difference gave an unbounded interval."""
DEMO_SERVER = "codesearch"
"""The bundled scripts' MCP server, renamed to the user's tool in the scaffolded scripts."""
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}\Z")
_USES = re.compile(r"^(?:[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_./-]+)?@[A-Za-z0-9_./-]+"
                   r"|\./[A-Za-z0-9_./-]*|docker://[A-Za-z0-9_./:@-]+)\Z")
"""The forms GitHub documents for a step's `uses:`; written into the workflows verbatim, so
nothing else (a newline would add keys to the step)."""


def _render(template: str, **values: object) -> str:
    env = jinja2.Environment(loader=jinja2.PackageLoader("copeca_action.github",
                                                         "templates/init"),
                             autoescape=False, undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    return env.get_template(template).render(**values)


def _yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def _controls() -> list[str]:
    """The bundled control tasks of the starter repository (at least MIN_CONTROLS)."""
    found = []
    for path in sorted((corpus_dir() / "tasks" / STARTER_REPO).glob("*.yaml")):
        if yaml.safe_load(path.read_text()).get("control") is True:
            found.append(path.stem)
    if len(found) < MIN_CONTROLS:  # the bundled corpus is broken, not the user's input
        raise ConfigError(f"the bundled corpus has {len(found)} control tasks for "
                          f"{STARTER_REPO}; init needs {MIN_CONTROLS}")
    return found


def _starter_files(tasks: list[str]) -> dict[str, str]:
    """The tasks and the repository pin they need, from the bundled corpus."""
    src = corpus_dir()
    repos = yaml.safe_load((src / "repos.yaml").read_text())
    pin = {"repos": {STARTER_REPO: repos["repos"][STARTER_REPO]}}
    header = ("# Repositories the tasks run on, each pinned (sdist: name + version + sha256;\n"
              "# git: a 40-hex commit). Add your own; see docs/task-authoring.md.\n")
    files = {"repos.yaml": header + _yaml(pin)}
    for name in tasks:
        files[f"tasks/{STARTER_REPO}/{name}.yaml"] = (
            src / "tasks" / STARTER_REPO / f"{name}.yaml").read_text()
    return files


def _rename_server(value: Any, name: str) -> Any:
    """A bundled script's tool-arm parts with the demo server renamed to the user's tool."""
    if isinstance(value, dict):
        out = {k: _rename_server(v, name) for k, v in value.items()}
        if out.get("server") == DEMO_SERVER:
            out["server"] = name
        if isinstance(out.get("tool_prefix"), str):
            out["tool_prefix"] = out["tool_prefix"].replace(f"mcp__{DEMO_SERVER}__",
                                                            f"mcp__{name}__")
        return out
    if isinstance(value, list):
        return [_rename_server(v, name) for v in value]
    return value


def _scripts(tasks: list[str], kind: str, name: str) -> str:
    """Scripts for a dry run of the scaffold's tasks, from the bundled ones: each task's
    baseline arm as is; for an MCP tool the tool arm calling the user's server (the stub's
    `search` and `definition` tools). Other kinds play the baseline scripts in both arms (the
    scripted model cannot tell the arms apart; docs/dry-run.md shows how with `marker`)."""
    wanted = {f"{STARTER_REPO}/{t}" for t in tasks}
    picked: list[dict[str, Any]] = []
    for path in sorted((corpus_dir() / "scripts").rglob("*.yaml")):
        for script in yaml.safe_load(path.read_text()).get("scripts") or []:
            sid = str(script["id"])
            task, _, arm = sid.rpartition("/") if sid.count("/") == 2 else (sid, "", "")
            if task not in wanted:
                continue
            if arm == DEMO_SERVER:
                if kind != "mcp":
                    continue
                script = _rename_server(script, name)
                script["id"] = f"{task}/{name}"
            picked.append(script)
    header = (f"# Scripted replies for `copeca-action run --dry-run` (and the action's dry-run):\n"
              f"# one script per task and arm, copied from copeca-action's demo with the tool\n"
              f"# renamed to {name}. Edit the steps to call your tool's real tools; the format\n"
              f"# is in docs/scripted-model.md and worked examples in docs/dry-run.md.\n")
    return header + _yaml({"version": 1, "scripts": picked})


def _stub_files(kind: str, name: str, bench: str, values: dict[str, object]) -> dict[str, str]:
    """A working stand-in for the tool, so the first dry run runs end to end."""
    folder = f"{bench}/tool-stub"
    if kind == "mcp":
        src = Path(__file__).resolve().parent.parent / "demo_tool"
        server = re.sub(r"if __package__:\n.*?\nelse:[^\n]*\n    (from _search import[^\n]*)",
                        lambda m: m.group(1).split("  #")[0], (src / "_server.py").read_text(),
                        flags=re.S)
        server = server.replace('SERVER_NAME = "codesearch"', f'SERVER_NAME = "{name}"')
        return {
            f"{folder}/__main__.py": (f'"""A stand-in MCP server for {name} (copeca-action\'s '
                                      'demo code search): `python tool-stub` starts it over '
                                      'stdio. Replace it with your server."""\n\n'
                                      "from _server import main\n\nmain()\n"),
            f"{folder}/_server.py": server,
            f"{folder}/_search.py": (src / "_search.py").read_text(),
        }
    if kind in ("wrapper", "hook", "setup"):
        suffix = {"wrapper": "-wrapper", "hook": "-hook.sh", "setup": "-setup.sh"}[kind]
        return {f"{folder}/{name}{suffix}": _render(f"stub-{kind}.j2", **values)}
    return {}


def scaffold(target: Path, kind: str, name: str = "my-tool", action: str = _pins.ACTION,
             bench_dir: str = "benchmark") -> list[Path]:
    """Write the benchmark and workflow under `target`; return the files written."""
    problems = []
    if kind not in KINDS:
        problems.append(Problem("--kind", f"expected one of {', '.join(KINDS)}; got {kind!r}"))
    if not _NAME.match(name):
        problems.append(Problem("--name", "expected lowercase letters, digits, '.', '_' or "
                                f"'-' (a mode name); got {name!r}"))
    elif name == "baseline":
        problems.append(Problem("--name", "'baseline' is the arm without your tool (written "
                                "beside it); name your tool's mode something else"))
    if not _USES.match(action):
        problems.append(Problem("--action", "expected a `uses:` reference: OWNER/REPO[/PATH]@REF, "
                                f"./PATH or docker://IMAGE; got {action!r}"))
    if problems:
        raise ConfigError(problems)
    controls = _controls()
    examples = list(STARTER_TASKS)
    tasks = examples + controls
    values = {"kind": kind, "name": name, "bench": bench_dir, "action": action,
              "checkout": _pins.CHECKOUT, "upload": _pins.UPLOAD_ARTIFACT,
              "prefix": f"mcp__{name}__", "n_tasks": len(examples),
              "n_controls": len(controls), "repetitions": REPETITIONS, "min_runs": MIN_RUNS,
              "tasks": [f"{STARTER_REPO}/{t}" for t in tasks]}
    bench = target / bench_dir
    files: dict[Path, str] = {bench / rel: text for rel, text in _starter_files(tasks).items()}
    files[bench / "modes" / "baseline.yaml"] = _render("baseline.yaml.j2", **values)
    files[bench / "modes" / f"{name}.yaml"] = _render(f"mode-{kind}.yaml.j2", **values)
    files[bench / "scenarios" / "pr.yaml"] = _render("scenario.yaml.j2", **values)
    files[bench / "scripts" / f"{name}.yaml"] = _scripts(tasks, kind, name)
    stubs = {target / rel: text for rel, text in
             _stub_files(kind, name, bench_dir, values).items()}
    files.update(stubs)
    files[target / ".github" / "workflows" / "copeca.yml"] = _render("workflow.yml.j2",
                                                                     **values)
    files[target / ".github" / "workflows" / "copeca-approve.yml"] = _render(
        "approve.yml.j2", **values)  # a maintainer's `/copeca run SHA` on a fork's PR
    existing = [p for p in files if p.exists()]
    if existing:
        raise ConfigError([Problem(str(p), "already exists; init never overwrites (remove it "
                                   "or pick another DIR)") for p in existing])
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if path in stubs and not path.name.endswith(".py"):
            path.chmod(0o755)
    return list(files)
