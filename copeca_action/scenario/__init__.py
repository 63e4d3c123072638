"""Inputs: tasks, scenarios, modes, runners, repository pins; loading and validation."""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from copeca_action.scenario._config import (
        KNOWN_PARSERS,
        Adaptive,
        BuildCacheSpec,
        DebianPin,
        GitPin,
        LocalPin,
        Mode,
        Pricing,
        RepoIndex,
        RepoSpec,
        Runner,
        Scenario,
        SdistPin,
        TaskSelection,
        Thresholds,
        Validity,
    )
    from copeca_action.scenario._load import (
        Corpus,
        check_references,
        corpus_folder,
        find_corpus_root,
        load_corpus,
        load_mode,
        load_repos,
        load_runner,
        load_scenario,
        load_task,
        scripts_folder,
    )
    from copeca_action.scenario._task import (
        ALLOWED_CATEGORIES,
        AnswerGrading,
        Grading,
        Mutation,
        PatchGrading,
        Span,
        Task,
        TaskSource,
        TestGrading,
        leaves_folder,
        leaves_task_folder,
    )
    from copeca_action.scenario._validate import (
        ValidationResult,
        contamination_of,
        lint_prompt,
        price_problems,
        require_prices,
        select_task_ids,
        unpriced_message,
        validate_paths,
    )

__all__ = [
    "ALLOWED_CATEGORIES",
    "KNOWN_PARSERS",
    "Adaptive",
    "AnswerGrading",
    "BuildCacheSpec",
    "Corpus",
    "DebianPin",
    "GitPin",
    "Grading",
    "LocalPin",
    "Mode",
    "Mutation",
    "PatchGrading",
    "Pricing",
    "RepoIndex",
    "RepoSpec",
    "Runner",
    "Scenario",
    "SdistPin",
    "Span",
    "Task",
    "TaskSelection",
    "TaskSource",
    "TestGrading",
    "Thresholds",
    "ValidationResult",
    "Validity",
    "check_references",
    "contamination_of",
    "corpus_folder",
    "find_corpus_root",
    "leaves_folder",
    "leaves_task_folder",
    "lint_prompt",
    "load_corpus",
    "load_mode",
    "load_repos",
    "load_runner",
    "load_scenario",
    "load_task",
    "price_problems",
    "require_prices",
    "scripts_folder",
    "select_task_ids",
    "unpriced_message",
    "validate_paths",
]

_LAZY: dict[str, str] = {
    "ALLOWED_CATEGORIES": "copeca_action.scenario._task",
    "Adaptive": "copeca_action.scenario._settings",
    "AnswerGrading": "copeca_action.scenario._task",
    "BuildCacheSpec": "copeca_action.scenario._config",
    "Corpus": "copeca_action.scenario._load",
    "DebianPin": "copeca_action.scenario._config",
    "GitPin": "copeca_action.scenario._config",
    "Grading": "copeca_action.scenario._task",
    "KNOWN_PARSERS": "copeca_action.scenario._config",
    "LocalPin": "copeca_action.scenario._config",
    "Mode": "copeca_action.scenario._config",
    "Mutation": "copeca_action.scenario._task",
    "PatchGrading": "copeca_action.scenario._task",
    "Pricing": "copeca_action.scenario._config",
    "RepoIndex": "copeca_action.scenario._config",
    "RepoSpec": "copeca_action.scenario._config",
    "Runner": "copeca_action.scenario._config",
    "Scenario": "copeca_action.scenario._config",
    "SdistPin": "copeca_action.scenario._config",
    "Span": "copeca_action.scenario._task",
    "Task": "copeca_action.scenario._task",
    "TaskSelection": "copeca_action.scenario._config",
    "TaskSource": "copeca_action.scenario._task",
    "TestGrading": "copeca_action.scenario._task",
    "Thresholds": "copeca_action.scenario._settings",
    "ValidationResult": "copeca_action.scenario._validate",
    "Validity": "copeca_action.scenario._config",
    "check_references": "copeca_action.scenario._load",
    "contamination_of": "copeca_action.scenario._validate",
    "corpus_folder": "copeca_action.scenario._load",
    "find_corpus_root": "copeca_action.scenario._load",
    "lint_prompt": "copeca_action.scenario._validate",
    "load_corpus": "copeca_action.scenario._load",
    "load_mode": "copeca_action.scenario._load",
    "load_repos": "copeca_action.scenario._load",
    "load_runner": "copeca_action.scenario._load",
    "load_scenario": "copeca_action.scenario._load",
    "leaves_folder": "copeca_action.scenario._task",
    "leaves_task_folder": "copeca_action.scenario._task",
    "load_task": "copeca_action.scenario._load",
    "price_problems": "copeca_action.scenario._validate",
    "require_prices": "copeca_action.scenario._validate",
    "scripts_folder": "copeca_action.scenario._load",
    "select_task_ids": "copeca_action.scenario._validate",
    "unpriced_message": "copeca_action.scenario._validate",
    "validate_paths": "copeca_action.scenario._validate",
}
"""Each public name and its module, imported on first use (PEP 562): importing one
submodule of this package does not load the others."""


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
