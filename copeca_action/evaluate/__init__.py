"""Patch evaluation: extract and sanitise an agent's patch, apply it to a clean tree, run the
hidden tests in a sandbox (local or docker), and record CooperBench-style results."""

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
