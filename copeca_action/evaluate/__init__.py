"""Patch evaluation: extract and sanitise an agent's patch, apply it to a clean tree, run the
hidden tests in a sandbox (local or docker), and record CooperBench-style results."""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from copeca_action.evaluate._apply import (
        STRATEGIES,
        ApplyOptions,
        ApplyResult,
        apply_patch,
        binary_without_payload,
    )
    from copeca_action.evaluate._check import CacheUse, CheckResult, CheckStep, check_task
    from copeca_action.evaluate._docker import DockerSandbox, build_image, docker_client
    from copeca_action.evaluate._evaluate import evaluate_coop, evaluate_solo
    from copeca_action.evaluate._git import BaseRepo, base_repo, clone_tree
    from copeca_action.evaluate._local import LocalSandbox, detect_network_cut
    from copeca_action.evaluate._logs import (
        LoggedRun,
        discover_runs,
        evaluate_experiment,
        read_eval,
        summarize_experiment,
        write_eval,
    )
    from copeca_action.evaluate._models import (
        EvalResult,
        EvalSummary,
        FeatureResult,
        FeatureSpec,
        MergeResult,
        PatchReport,
        RunSummary,
    )
    from copeca_action.evaluate._patch import (
        DroppedFile,
        SanitizedPatch,
        extract_patch,
        normalize_patch,
        sanitize_patch,
    )
    from copeca_action.evaluate._resolve import (
        CorpusResolver,
        evaluate_task_patch,
        evaluate_task_patch_at,
    )
    from copeca_action.evaluate._results import (
        TestCounts,
        parse_test_output,
        reported_names,
        verdict_of,
    )
    from copeca_action.evaluate._sandbox import (
        ExecResult,
        Sandbox,
        make_sandbox,
        register_sandbox,
        sandbox_names,
    )
    from copeca_action.evaluate._testfiles import TestFileRules

__all__ = [
    "STRATEGIES",
    "ApplyOptions",
    "ApplyResult",
    "BaseRepo",
    "CacheUse",
    "CheckResult",
    "CheckStep",
    "CorpusResolver",
    "DockerSandbox",
    "DroppedFile",
    "EvalResult",
    "EvalSummary",
    "ExecResult",
    "FeatureResult",
    "FeatureSpec",
    "LocalSandbox",
    "LoggedRun",
    "MergeResult",
    "PatchReport",
    "RunSummary",
    "Sandbox",
    "SanitizedPatch",
    "TestCounts",
    "TestFileRules",
    "apply_patch",
    "base_repo",
    "binary_without_payload",
    "build_image",
    "check_task",
    "clone_tree",
    "detect_network_cut",
    "discover_runs",
    "docker_client",
    "evaluate_coop",
    "evaluate_experiment",
    "evaluate_solo",
    "evaluate_task_patch",
    "evaluate_task_patch_at",
    "extract_patch",
    "make_sandbox",
    "normalize_patch",
    "parse_test_output",
    "read_eval",
    "register_sandbox",
    "reported_names",
    "sandbox_names",
    "sanitize_patch",
    "summarize_experiment",
    "verdict_of",
    "write_eval",
]

_LAZY: dict[str, str] = {
    "ApplyOptions": "copeca_action.evaluate._apply",
    "ApplyResult": "copeca_action.evaluate._apply",
    "BaseRepo": "copeca_action.evaluate._git",
    "CacheUse": "copeca_action.evaluate._check",
    "CheckResult": "copeca_action.evaluate._check",
    "CheckStep": "copeca_action.evaluate._check",
    "CorpusResolver": "copeca_action.evaluate._resolve",
    "DockerSandbox": "copeca_action.evaluate._docker",
    "DroppedFile": "copeca_action.evaluate._patch",
    "EvalResult": "copeca_action.evaluate._models",
    "EvalSummary": "copeca_action.evaluate._models",
    "ExecResult": "copeca_action.evaluate._sandbox",
    "FeatureResult": "copeca_action.evaluate._models",
    "FeatureSpec": "copeca_action.evaluate._models",
    "LocalSandbox": "copeca_action.evaluate._local",
    "LoggedRun": "copeca_action.evaluate._logs",
    "MergeResult": "copeca_action.evaluate._models",
    "PatchReport": "copeca_action.evaluate._models",
    "RunSummary": "copeca_action.evaluate._models",
    "STRATEGIES": "copeca_action.evaluate._apply",
    "Sandbox": "copeca_action.evaluate._sandbox",
    "SanitizedPatch": "copeca_action.evaluate._patch",
    "TestCounts": "copeca_action.evaluate._results",
    "TestFileRules": "copeca_action.evaluate._testfiles",
    "apply_patch": "copeca_action.evaluate._apply",
    "base_repo": "copeca_action.evaluate._git",
    "binary_without_payload": "copeca_action.evaluate._apply",
    "build_image": "copeca_action.evaluate._docker",
    "check_task": "copeca_action.evaluate._check",
    "clone_tree": "copeca_action.evaluate._git",
    "detect_network_cut": "copeca_action.evaluate._local",
    "discover_runs": "copeca_action.evaluate._logs",
    "docker_client": "copeca_action.evaluate._docker",
    "evaluate_coop": "copeca_action.evaluate._evaluate",
    "evaluate_experiment": "copeca_action.evaluate._logs",
    "evaluate_solo": "copeca_action.evaluate._evaluate",
    "evaluate_task_patch": "copeca_action.evaluate._resolve",
    "evaluate_task_patch_at": "copeca_action.evaluate._resolve",
    "extract_patch": "copeca_action.evaluate._patch",
    "make_sandbox": "copeca_action.evaluate._sandbox",
    "normalize_patch": "copeca_action.evaluate._patch",
    "parse_test_output": "copeca_action.evaluate._results",
    "read_eval": "copeca_action.evaluate._logs",
    "register_sandbox": "copeca_action.evaluate._sandbox",
    "reported_names": "copeca_action.evaluate._results",
    "sandbox_names": "copeca_action.evaluate._sandbox",
    "sanitize_patch": "copeca_action.evaluate._patch",
    "summarize_experiment": "copeca_action.evaluate._logs",
    "verdict_of": "copeca_action.evaluate._results",
    "write_eval": "copeca_action.evaluate._logs",
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
