"""`copeca-action validate`: schema, cross references, tool-agnostic lint, contamination."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import yaml

from copeca_action._util.yamlio import YamlDoc, load_yaml
from copeca_action.errors import ConfigError, Problem
from copeca_action.scenario._config import Mode, RepoIndex, Runner, Scenario
from copeca_action.scenario._load import (
    Corpus,
    add_to_corpus,
    find_corpus_root,
    guess_kind,
    iter_yaml_files,
    load_corpus,
    placeholder_problems,
    runners_for,
    scripts_folder,
)
from copeca_action.scenario._task import Task, leaves_folder, leaves_task_folder

DATA = Path(__file__).parent / "data"


@dataclass
class ValidationResult:
    files: int = 0
    tasks: int = 0
    repositories: set[str] = field(default_factory=set)
    """Repositories, languages and controls of the valid tasks seen (issue #22's bar)."""
    languages: set[str] = field(default_factory=set)
    controls: int = 0
    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    runs_on: dict[Path, tuple[Corpus, dict[str, tuple[Task, Path]]]] = field(
        default_factory=dict)
    """Per corpus (its folder): the valid tasks seen and the tasks the valid scenarios
    select, id → (task, file), for the checks that need their repository (`answers_in_reach`)."""

    @property
    def ok(self) -> bool:
        return not self.errors

    def summary(self) -> str:
        spread = (f" ({len(self.repositories)} repositories, {len(self.languages)} languages, "
                  f"{self.controls} controls)" if self.tasks else "")
        return (f"{self.files} files, {self.tasks} tasks{spread}, {len(self.errors)} errors, "
                f"{len(self.warnings)} warnings")


@dataclass(frozen=True)
class LintRule:
    pattern: re.Pattern[str]
    reason: str


def _normalise(text: str) -> str:
    return re.sub(r"[^a-z0-9+]", "", text.lower())


@cache
def contamination_list() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(benchmark name, normalised aliases) from data/contamination.yaml."""
    data = yaml.safe_load((DATA / "contamination.yaml").read_text())
    return tuple((b["name"], tuple(sorted({_normalise(a) for a in [b["name"], *b["aliases"]]},
                                          key=len, reverse=True)))
                 for b in data["benchmarks"])


@cache
def lint_rules() -> tuple[LintRule, ...]:
    data = yaml.safe_load((DATA / "lint.yaml").read_text())
    return tuple(LintRule(re.compile(r["pattern"], re.IGNORECASE), r["reason"])
                 for r in data["rules"])


def contamination_of(task: Task) -> str | None:
    """The blocklisted benchmark a task's source names, if any."""
    fields = [task.source.origin, task.source.reference or "", task.source.note or ""]
    text = " ".join(_normalise(f) for f in fields)
    hits = [(len(alias), name) for name, aliases in contamination_list()
             for alias in aliases if alias and alias in text]
    return max(hits)[1] if hits else None  # the most specific name: "SWE-bench Verified"


def lint_prompt(task: Task) -> list[str]:
    """Messages for every tool or method the prompt names."""
    exempt = {w.lower() for w in [*re.split(r"[^A-Za-z0-9]+", task.repo), *task.lint_allow] if w}
    found = []
    for rule in lint_rules():
        for match in rule.pattern.finditer(task.prompt):
            words = {w.lower() for w in re.split(r"[^A-Za-z0-9]+", match.group(0)) if w}
            if words and words <= exempt:
                continue
            found.append(f"prompt names {match.group(0).strip()!r}: {rule.reason}")
            break
    return found


TEST_PLACEHOLDERS = ("python", "workdir", "setup_dir")
"""What a test command's argv may name as `{…}` (the engine fills these in)."""


def check_task(task: Task, path: Path, doc: YamlDoc, corpus: Corpus,
               result: ValidationResult) -> None:
    stem = task.id.rsplit("/", 1)[-1]
    if path.stem != stem:
        result.errors.append(doc.problem(("id",), f"task id {task.id!r} does not match its "
                                         f"file name {path.name!r} (expected {stem}.yaml)"))
    if task.grading.test is not None:
        for i, arg in enumerate(task.grading.test.command):
            for name in re.findall(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", arg):
                if name not in TEST_PLACEHOLDERS:
                    result.errors.append(doc.problem(
                        ("grading", "test", "command", i), f"unknown placeholder {{{name}}}; "
                        f"known: {', '.join('{' + p + '}' for p in TEST_PLACEHOLDERS)}"))
    if task.repo not in corpus.repos:
        known = ", ".join(sorted(corpus.repos)) or "none"
        result.errors.append(doc.problem(("repo",), f"unknown repository {task.repo!r}; "
                                         f"{corpus.root / 'repos.yaml'} has: {known}"))
    elif task.commit and corpus.repos[task.repo].git is None:
        result.errors.append(doc.problem(("commit",), "a commit override needs a git origin "
                                         f"for repository {task.repo!r}"))
    else:
        _check_identical_paths(task, doc, corpus, result)
    bench = contamination_of(task)
    if bench:
        result.errors.append(doc.problem(("source",), f"source names {bench}, a benchmark known"
                                         " to be in training data; write original tasks"))
    for message in lint_prompt(task):
        result.errors.append(doc.problem(("prompt",), message))
    patch = task.grading.patch
    if patch is not None:
        for key in ("tests_patch", "reference_patch"):
            rel = getattr(patch, key)
            if not rel:
                continue
            if why := leaves_task_folder(path, rel):
                result.errors.append(doc.problem(("grading", "patch", key), why))
            elif not (path.parent / rel).is_file():
                result.errors.append(doc.problem(("grading", "patch", key),
                                                 f"file not found: {path.parent / rel}"))
    if task.type == "comprehension" and not task.control and not task.gold_context:
        result.warnings.append(doc.problem(("gold_context",), "no gold_context: retrieval "
                                           "metrics will skip this task"))


def task_files(task: Task) -> list[tuple[tuple[str | int, ...], str]]:
    """Every repository file a task points into, with its location in the task file."""
    out: list[tuple[tuple[str | int, ...], str]] = []
    for key in ("gold_context", "gold_edit_lines"):
        for i, span in enumerate(getattr(task, key)):
            out.append(((key, i, "file"), span.file))
    if task.grading.test is not None:
        for i, m in enumerate(task.grading.test.mutations):
            out.append((("grading", "test", "mutations", i, "file"), m.file))
    return out


def _check_identical_paths(task: Task, doc: YamlDoc, corpus: Corpus,
                           result: ValidationResult) -> None:
    """A Debian tarball that differs from the tag's tree outside some paths: tasks must stay
    inside them, or their line numbers would not hold for both origins."""
    debian = corpus.repos[task.repo].debian
    if debian is None or not debian.identical_paths:
        return
    prefixes = debian.identical_paths
    for loc, file in task_files(task):
        if not any(file == p.rstrip("/") or file.startswith(p) for p in prefixes):
            result.errors.append(doc.problem(loc, f"{file} is outside the paths where Debian's "
                                             f"{debian.package} tarball equals the git tag "
                                             f"({', '.join(prefixes)})"))


def check_scenario(scenario: Scenario, doc: YamlDoc, corpus: Corpus,
                   result: ValidationResult) -> None:
    for i, mode in enumerate(scenario.modes):
        if mode not in corpus.modes:
            result.errors.append(doc.problem(("modes", i), f"unknown mode {mode!r}; known: "
                                             + (", ".join(sorted(corpus.modes)) or "none")))
    for model, runner in scenario.model_runner_map.items():
        if runner not in corpus.runners:
            result.errors.append(doc.problem(("model_runner_map", model),
                                             f"unknown runner {runner!r}; known: "
                                             + (", ".join(sorted(corpus.runners)) or "none")))
    errors, warnings = price_problems(scenario, doc, corpus)
    result.errors += errors
    result.warnings += warnings
    ids = sorted(corpus.tasks)
    for i, pattern in enumerate(scenario.tasks.include):
        if not fnmatch.filter(ids, pattern):
            result.warnings.append(doc.problem(("tasks", "include", i),
                                               f"glob {pattern!r} matches no task"))
    selected = select_task_ids(scenario, ids)
    if not selected:
        result.errors.append(doc.problem(("tasks",), "no task is left after include/exclude: the"
                                         f" scenario would run nothing ({len(ids)} tasks known)"))
    else:
        taken = result.runs_on.setdefault(corpus.root, (corpus, {}))[1]
        taken.update({i: (corpus.tasks[i], corpus.task_files[i]) for i in selected})
        from copeca_action.plan import build_plan, unreachable_min_runs

        try:
            design = unreachable_min_runs(scenario, build_plan(scenario, corpus.tasks))
        except ConfigError as exc:  # a plan too large to build
            result.errors += [doc.problem(("repetitions",), p.message) for p in exc.problems]
        else:
            if design:
                result.warnings.append(doc.problem(
                    ("thresholds", "min_runs"), design.removeprefix("thresholds.min_runs: ")))
    if scenario.model_endpoint == "scripted" and scenario.scripts:
        _, why = scripts_folder(doc.path, scenario.scripts, corpus.root)
        if why:
            result.errors.append(doc.problem(("scripts",), why))
    if len(scenario.modes) == 1:
        result.warnings.append(doc.problem(("modes",), "a single mode: no other arm to compare "
                                           "it with, so no delta and no verdict (only with "
                                           "--compare base-ref, for a tool mode)"))
    elif "baseline" not in scenario.modes:
        result.warnings.append(doc.problem(("modes",), "no baseline mode: no delta can be "
                                           "computed against a baseline"))


def unpriced_message(runner: Runner, model: str, runner_file: Path | str) -> str:
    """Why a model a runner cannot price is refused, and how to add its price."""
    return (f"model {model!r} has no price in {runner_file} (runner {runner.name!r}), and "
            f"{runner.binary} reports no cost of its own (vendor_cost: false): every run's "
            "cost would be unknown. Add an entry under `pricing:` with input, output, "
            "cache_read, cache_write_5m, cache_write_1h, source and checked (see "
            f"docs/runners.md, 'The price table'), or list {model!r} in the `aliases` of the "
            "entry it is served as")


def price_problems(scenario: Scenario, doc: YamlDoc,
                   corpus: Corpus) -> tuple[list[Problem], list[Problem]]:
    """(errors, warnings) for the scenario's models and their runners' price tables: a
    model without a price is an error for a runner that reports no cost of its own, a
    warning for one that does (its own figure is then the cost)."""
    errors: list[Problem] = []
    warnings: list[Problem] = []
    for model in scenario.models:
        name = scenario.model_runner_map.get(model)
        runner = corpus.runners.get(name or "")
        if runner is None or runner.price_of(model) is not None:
            continue
        where = ("model_runner_map", model)
        runner_file = corpus.runners_root / f"{runner.name}.yaml"
        if not runner.vendor_cost:
            errors.append(doc.problem(where, unpriced_message(runner, model, runner_file)))
        else:
            warnings.append(doc.problem(where, (
                f"model {model!r} has no price in {runner_file}: its cost will be the CLI's "
                f"own figure ({runner.binary} reports one), not checked against a table")))
    return errors, warnings


def require_prices(scenario: Scenario, scenario_path: Path, corpus: Corpus) -> list[Problem]:
    """Refuse before any run: raises ConfigError naming every model a runner without a cost
    of its own cannot price; returns the warnings (models priced by the CLI alone).

    Raises:
        ConfigError: a scenario model has no price and its runner reports no cost.
    """
    errors, warnings = price_problems(scenario, load_yaml(scenario_path), corpus)
    if errors:
        raise ConfigError(errors)
    return warnings


def select_task_ids(scenario: Scenario, ids: list[str]) -> list[str]:
    """Task ids matching any include glob and no exclude glob, sorted."""
    inc, exc = scenario.tasks.include, scenario.tasks.exclude
    return sorted(i for i in ids if any(fnmatch.fnmatchcase(i, g) for g in inc)
                  and not any(fnmatch.fnmatchcase(i, g) for g in exc))


def check_mode(mode: Mode, path: Path, doc: YamlDoc, result: ValidationResult) -> None:
    if path.parent.name == "modes" and path.stem != mode.name:
        result.errors.append(doc.problem(("name",), f"mode name {mode.name!r} differs from its "
                                         f"file name {path.stem!r}"))
    result.warnings += placeholder_problems(mode, doc)[1]


def check_repos(index: RepoIndex, doc: YamlDoc, result: ValidationResult) -> None:
    """A repository's Dockerfile is a file in the corpus (its folder is the build context:
    a link leading out sent that folder to the engine)."""
    root = doc.path.parent
    for name, spec in index.repos.items():
        if spec.dockerfile is None:
            continue
        where = ("repos", name, "dockerfile")
        if why := leaves_folder(spec.dockerfile, root, {"the corpus": root}):
            result.errors.append(doc.problem(where, why))
        elif not (root / spec.dockerfile).is_file():
            result.errors.append(doc.problem(where, f"file not found: {root / spec.dockerfile}"))


def check_runner(runner: Runner, path: Path, doc: YamlDoc, result: ValidationResult) -> None:
    if path.parent.name == "runners" and path.stem != runner.name:
        result.errors.append(doc.problem(("name",), f"runner name {runner.name!r} differs from "
                                         f"its file name {path.stem!r}"))


def context_for(path: Path, corpus_root: Path | None) -> Corpus:
    """The corpus cross references are checked against."""
    root = corpus_root or find_corpus_root(path.resolve())
    corpus = load_corpus(root) if root else load_corpus()
    corpus.problems.clear()
    return corpus


def validate_paths(paths: list[Path], corpus_root: Path | None = None) -> ValidationResult:
    """Validate files and folders; cross references resolve against the enclosing corpus
    (or `corpus_root`, or the bundled corpus for loose files)."""
    result = ValidationResult()
    contexts: dict[Path | None, Corpus] = {}
    seen_ids: dict[str, Path] = {}
    for top in paths:
        if not top.exists():
            result.errors.append(Problem(str(top), "no such file or folder"))
            continue
        files = list(iter_yaml_files(top))
        if top.is_dir() and (top / "repos.yaml").is_file():
            runners = runners_for(top)
            if runners.is_dir() and runners.resolve() not in [p.resolve() for p in paths]:
                files += sorted(runners.glob("*.yaml"))
        key = corpus_root or find_corpus_root(top.resolve())
        if key not in contexts:
            contexts[key] = context_for(top, corpus_root)
        context = contexts[key]
        for path in files:
            result.files += 1
            _validate_file(path, context, seen_ids, result)
    answers_in_reach(result)
    return result


def answers_in_reach(result: ValidationResult) -> None:
    """The tasks seen (and the tasks of the scenarios seen) whose repository a run takes
    from a `local:` pin whose clone holds the task's own file: refused here as `run` would
    refuse them, before any snapshot or run (`workspace.local_pin_answers`)."""
    from copeca_action.workspace import local_pin_answers

    for corpus, files in result.runs_on.values():
        pairs = [files[i] for i in sorted(files)]
        for hit in local_pin_answers(corpus.root, corpus.repos, pairs):
            # a pin this machine cannot read (a checkout kept elsewhere) is the run's to
            # refuse; one that shows the answers is wrong wherever it is read
            (result.warnings if hit.unreadable else result.errors).append(
                load_yaml(files[hit.task_id][1]).problem(("repo",), hit.message))


def _validate_file(path: Path, context: Corpus, seen_ids: dict[str, Path],
                   result: ValidationResult) -> None:
    try:
        doc = load_yaml(path)
        kind = guess_kind(path, doc)
        if kind is None:
            raise ConfigError(Problem(str(path), "cannot tell what this file is: expected a task "
                                      "(id, prompt, grading), a scenario (tasks, modes, models), "
                                      "a mode (name, mcp_config/env/...), a runner (binary, argv, "
                                      "parser) or repos.yaml (repos)", 1))
        scratch = Corpus(root=context.root, runners_root=context.runners_root,
                         repos=context.repos, modes=context.modes, runners=context.runners)
        model = add_to_corpus(scratch, path, doc, kind)
    except ConfigError as exc:
        result.errors.extend(exc.problems)
        return
    if isinstance(model, Task):
        result.tasks += 1
        result.repositories.add(model.repo)
        result.languages.add(model.language)
        result.controls += model.control
        if model.id in seen_ids:
            result.errors.append(doc.problem(("id",), f"duplicate task id {model.id!r} (also in "
                                             f"{seen_ids[model.id]})"))
        else:
            seen_ids[model.id] = path
            known = context.task_files.get(model.id)
            if known is not None and known.resolve() != path.resolve():
                result.errors.append(doc.problem(("id",), f"duplicate task id {model.id!r} "
                                                 f"(also in {known})"))
        check_task(model, path, doc, context, result)
        if model.repo in context.repos:
            result.runs_on.setdefault(context.root, (context, {}))[1][model.id] = (model, path)
    elif isinstance(model, Scenario):
        check_scenario(model, doc, context, result)
    elif isinstance(model, Mode):
        check_mode(model, path, doc, result)
    elif isinstance(model, Runner):
        check_runner(model, path, doc, result)
    elif isinstance(model, RepoIndex):
        check_repos(model, doc, result)
