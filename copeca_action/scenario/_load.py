"""Reading inputs: one loader per contract, and a Corpus that holds them all."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel

from copeca_action._util.paths import corpus_dir, runners_dir
from copeca_action._util.yamlio import Loc, YamlDoc, load_yaml, parse_model
from copeca_action.errors import ConfigError, Problem
from copeca_action.scenario._config import Mode, RepoIndex, RepoSpec, Runner, Scenario
from copeca_action.scenario._task import Task, leaves_folder

Kind = Literal["task", "scenario", "mode", "runner", "repos"]
M = TypeVar("M", bound=BaseModel)

MODELS: dict[Kind, type[BaseModel]] = {
    "task": Task, "scenario": Scenario, "mode": Mode, "runner": Runner, "repos": RepoIndex,
}
SKIP_DIRS = {"scripts", "node_modules", "snapshots", "patches", "__pycache__"}
YAML_SUFFIXES = {".yaml", ".yml"}


def load_model(path: Path | str, model: type[M]) -> M:
    """Load one YAML file into one model; every error is located."""
    return parse_model(load_yaml(path), model)


def load_task(path: Path | str) -> Task:
    return load_model(path, Task)


def load_scenario(path: Path | str) -> Scenario:
    return load_model(path, Scenario)


def load_mode(path: Path | str) -> Mode:
    return load_model(path, Mode)


def load_runner(path: Path | str) -> Runner:
    return load_model(path, Runner)


def load_repos(path: Path | str) -> dict[str, RepoSpec]:
    return load_model(path, RepoIndex).repos


def guess_kind(path: Path, doc: YamlDoc) -> Kind | None:
    """Which contract a file follows: by its place in a corpus first, then by its keys."""
    if path.name in ("repos.yaml", "repos.yml"):
        return "repos"
    parents = [p.name for p in path.parents]
    for folder, kind in (("modes", "mode"), ("scenarios", "scenario"), ("runners", "runner")):
        if parents and parents[0] == folder:
            return kind  # type: ignore[return-value]
    if "tasks" in parents:
        return "task"
    data = doc.data if isinstance(doc.data, dict) else {}
    keys = set(data)
    if keys & {"prompt", "grading", "gold_context"}:
        return "task"
    if "repos" in keys:
        return "repos"
    if keys & {"model_runner_map", "repetitions"} or ({"tasks", "modes"} <= keys):
        return "scenario"
    if keys & {"parser", "binary", "pricing", "argv"}:
        return "runner"
    if keys & {"mcp_config", "validity", "wrapper", "agent_config", "setup", "env"}:
        return "mode"
    return None


def iter_yaml_files(path: Path, _seen: set[Path] | None = None) -> Iterator[Path]:
    """YAML files under `path` (or `path` itself), skipping data folders and hidden ones.
    A folder reached twice (a symbolic link to a parent, or two links to one folder) is read
    once: a link loop would otherwise be walked until the path is too long, and two links
    to a parent make that walk exponential (`validate` never ended)."""
    if path.is_file():
        yield path
        return
    seen = _seen if _seen is not None else set()
    real = path.resolve()
    if real in seen:
        return
    seen.add(real)
    for child in sorted(path.iterdir()):
        if child.name.startswith(".") or child.name in SKIP_DIRS:
            continue
        if child.is_dir():
            yield from iter_yaml_files(child, seen)
        elif child.suffix in YAML_SUFFIXES:
            yield child


@dataclass
class Corpus:
    """Everything a scenario can refer to, loaded and validated per file."""

    root: Path
    runners_root: Path
    tasks: dict[str, Task] = field(default_factory=dict)
    task_files: dict[str, Path] = field(default_factory=dict)
    repos: dict[str, RepoSpec] = field(default_factory=dict)
    modes: dict[str, Mode] = field(default_factory=dict)
    runners: dict[str, Runner] = field(default_factory=dict)
    scenarios: dict[Path, Scenario] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    named_files: dict[tuple[str, str], Path] = field(default_factory=dict)
    """(kind, name) → the file that defined each mode and runner, so a second file with the
    same name is an error rather than silently the one a run uses."""

    def task_dir(self, task_id: str) -> Path:
        return self.task_files[task_id].parent

    def require_ok(self) -> Corpus:
        if self.problems:
            raise ConfigError(self.problems)
        return self


def find_corpus_root(start: Path) -> Path | None:
    """The nearest folder at or above `start` that holds a repos.yaml, or whose `corpus/` (a
    checkout of copeca-action) or `benchmark/` (what `init` writes into a tool's repository)
    does. Without `benchmark/`, `list` run where `init` leaves you listed the bundled corpus
    instead of your tasks."""
    here = start if start.is_dir() else start.parent
    for candidate in (here, *here.parents):
        if (candidate / "repos.yaml").is_file():
            return candidate
        for sub in ("corpus", "benchmark"):
            if (candidate / sub / "repos.yaml").is_file():
                return candidate / sub
    return None


def corpus_folder(path: Path, flag: str) -> Path:
    """The corpus a `--corpus` (or `list FOLDER`) names: `path` itself or its `corpus/` when it
    holds repos.yaml. Anything else is refused naming the flag: loading a folder without one
    walked all of it (`--corpus /` walked the whole file system) to report "mode 'baseline'
    is not in /modes", and `list /etc/passwd` listed "0 tasks"."""
    if not path.is_dir():
        raise ConfigError(f"{path}: " + ("is a file, expected a corpus folder" if path.exists()
                                         else "no such folder"), flag)
    for candidate in (path, path / "corpus"):
        if (candidate / "repos.yaml").is_file():
            return candidate
    raise ConfigError(f"{path}: not a corpus folder (no repos.yaml in it, nor in corpus/ "
                      "inside it)", flag)


def scripts_folder(scenario_path: Path, rel: str, corpus_root: Path) -> tuple[Path, str | None]:
    """The folder a scenario's `scripts:` names (relative to the scenario file), and why it
    cannot be played (None: it can). It must lie inside the benchmark: the corpus the scenario
    runs against (`corpus_root`) or the scenario's own folder. A folder elsewhere on the
    machine (`/tmp/x`, `../../..`, a link leading out) was played as the benchmark's scripts
    and made the benchmark work on one machine only."""
    here = scenario_path.resolve().parent
    target = (here / rel).resolve()
    folders = {"the corpus": corpus_root}
    if not here.is_relative_to(corpus_root.resolve()):
        folders["the scenario's folder"] = here
    if why := leaves_folder(rel, here, folders):
        return target, why
    if not target.is_dir():
        return target, (f"scripts folder {target} does not exist"
                        + (" (it is a file)" if target.exists() else ""))
    return target, None


def runners_for(corpus_root: Path) -> Path:
    """A checkout keeps runners/ beside corpus/; otherwise the bundled runners."""
    sibling = corpus_root.parent / "runners"
    return sibling if sibling.is_dir() else runners_dir()


def load_corpus(root: Path | None = None, runners_root: Path | None = None) -> Corpus:
    """Load a corpus folder (default: the bundled one), collecting problems, not stopping."""
    root = Path(root) if root is not None else corpus_dir()
    corpus = Corpus(root=root, runners_root=runners_root or runners_for(root))
    files = list(iter_yaml_files(root))
    if corpus.runners_root.is_dir():
        files += [p for p in sorted(corpus.runners_root.glob("*.yaml"))]
    for path in files:
        try:
            doc = load_yaml(path)
            kind = guess_kind(path, doc)
            if kind is None:
                continue
            add_to_corpus(corpus, path, doc, kind)
        except ConfigError as exc:
            corpus.problems.extend(exc.problems)
    return corpus


MODE_PLACEHOLDERS = ("python", "tool_dir", "demo_tool")
"""What the engine fills in a mode's settings (`engine._context.expand_mode`)."""
_MODE_FIELD = re.compile(r"(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*)\}")
"""`{name}`, not a shell's `${name}`."""


def placeholder_problems(mode: Mode, doc: YamlDoc) -> tuple[list[Problem], list[Problem]]:
    """(errors, warnings) for the `{name}`s in a mode's settings the harness does not fill:
    they reach the tool as written on every run of the arm. One that is a near miss of a
    placeholder (`{tool_dri}`, `{Demo_Tool}`) is a typo and an error, so `plan` and `run`
    refuse before the first run; any other (`{x}` in a setup's Python snippet, a tool's
    own template) is a warning."""
    errors: list[Problem] = []
    warnings: list[Problem] = []
    data = mode.model_dump(mode="json", include={"mcp_config", "env", "agent_config",
                                                 "wrapper", "setup", "validity"})
    known = ", ".join("{" + p + "}" for p in MODE_PLACEHOLDERS)
    for where, text in _strings(data, ()):
        for name in _MODE_FIELD.findall(text):
            if name in MODE_PLACEHOLDERS:
                continue
            near = difflib.get_close_matches(name.lower(), MODE_PLACEHOLDERS, n=1, cutoff=0.75)
            if near:
                errors.append(doc.problem(where, f"{{{name}}} is no placeholder the harness "
                                          f"fills: did you mean {{{near[0]}}}? (it fills "
                                          f"{known}; as written it would reach the tool)"))
            else:
                warnings.append(doc.problem(where, f"{{{name}}} is no placeholder the harness "
                                            f"fills (it fills {known}): it reaches the tool "
                                            "as written"))
            break
    return errors, warnings


def _strings(value: object, where: Loc) -> Iterator[tuple[Loc, str]]:
    """Every string in a JSON-like value, with its location."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, (*where, str(key)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, (*where, i))


def add_to_corpus(corpus: Corpus, path: Path, doc: YamlDoc, kind: Kind) -> BaseModel:
    """Parse `doc` as `kind` and register it, reporting name clashes."""
    model = parse_model(doc, MODELS[kind])
    if isinstance(model, Task):
        if model.id in corpus.task_files and corpus.task_files[model.id] != path:
            raise ConfigError(doc.problem(("id",), f"duplicate task id {model.id!r} (also in "
                                          f"{corpus.task_files[model.id]})"))
        corpus.tasks[model.id] = model
        corpus.task_files[model.id] = path
    elif isinstance(model, RepoIndex):
        corpus.repos.update(model.repos)
    elif isinstance(model, Mode | Runner):
        key = (kind, model.name)
        first = corpus.named_files.get(key)
        if first is not None and first != path:
            raise ConfigError(doc.problem(("name",), f"duplicate {kind} name {model.name!r} "
                                          f"(also in {first}): which one a run would use "
                                          "depends on file order; rename or remove one"))
        corpus.named_files[key] = path
        if isinstance(model, Mode):
            typos = placeholder_problems(model, doc)[0]
            if typos:
                raise ConfigError(typos)
            corpus.modes[model.name] = model
        else:
            corpus.runners[model.name] = model
    elif isinstance(model, Scenario):
        corpus.scenarios[path] = model
    return model


def check_references(scenario: Scenario, corpus: Corpus, scenario_path: Path) -> None:
    """What a scenario names must exist: its modes and runners in the corpus, and its
    scripts folder for `model_endpoint: scripted`. Checked by `plan` and before `run`
    spends anything; every problem is named with the scenario file and field."""
    doc = load_yaml(scenario_path)
    problems = []
    for i, mode in enumerate(scenario.modes):
        if mode not in corpus.modes:
            problems.append(doc.problem(("modes", i), f"mode {mode!r} is not in "
                                        f"{corpus.root / 'modes'} (known: "
                                        f"{', '.join(sorted(corpus.modes)) or 'none'})"))
    for model, runner in scenario.model_runner_map.items():
        if runner not in corpus.runners:
            problems.append(doc.problem(("model_runner_map", model), f"runner {runner!r} is "
                                        f"not in {corpus.runners_root} (known: "
                                        f"{', '.join(sorted(corpus.runners)) or 'none'})"))
    if scenario.model_endpoint == "scripted" and scenario.scripts:
        _, why = scripts_folder(scenario_path, scenario.scripts, corpus.root)
        if why:
            problems.append(doc.problem(("scripts",), why))
    if problems:
        raise ConfigError(problems)
