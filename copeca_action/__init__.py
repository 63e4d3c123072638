"""copeca-action: is an agent tool cheaper or dearer per correct answer?

The public API: the contracts of each stage and the verbs that connect them.
"""

import importlib as _importlib
import typing as _typing

from copeca_action.errors import (
    BundleError,
    ConfigError,
    CopecaError,
    GitHubError,
    InfraError,
    Problem,
    VerificationError,
    WorkspaceError,
)

__version__ = "0.1.0"

if _typing.TYPE_CHECKING:
    from copeca_action.bundle import BundleContents, merge_bundles, verify_bundle, write_bundle
    from copeca_action.plan import PlannedRun, RunPlan, build_plan, shard_plan
    from copeca_action.records import RunRecord, read_records
    from copeca_action.report import Decision, Report, build_report, decide
    from copeca_action.scenario import (
        Mode,
        RepoSpec,
        Runner,
        Scenario,
        Task,
        load_corpus,
        load_scenario,
        validate_paths,
    )

_LAZY: dict[str, str] = {
    "BundleContents": "copeca_action.bundle",
    "Decision": "copeca_action.report",
    "Mode": "copeca_action.scenario",
    "PlannedRun": "copeca_action.plan",
    "RepoSpec": "copeca_action.scenario",
    "Report": "copeca_action.report",
    "RunPlan": "copeca_action.plan",
    "RunRecord": "copeca_action.records",
    "Runner": "copeca_action.scenario",
    "Scenario": "copeca_action.scenario",
    "Task": "copeca_action.scenario",
    "build_plan": "copeca_action.plan",
    "build_report": "copeca_action.report",
    "decide": "copeca_action.report",
    "load_corpus": "copeca_action.scenario",
    "load_scenario": "copeca_action.scenario",
    "merge_bundles": "copeca_action.bundle",
    "read_records": "copeca_action.records",
    "shard_plan": "copeca_action.plan",
    "validate_paths": "copeca_action.scenario",
    "verify_bundle": "copeca_action.bundle",
    "write_bundle": "copeca_action.bundle",
}
"""Public names and the package that defines each: imported on first use (PEP 562), so
`import copeca_action` (and every CLI start) does not load the whole harness."""

__all__ = [
    "BundleContents",
    "BundleError",
    "ConfigError",
    "CopecaError",
    "Decision",
    "GitHubError",
    "InfraError",
    "Mode",
    "PlannedRun",
    "Problem",
    "RepoSpec",
    "Report",
    "RunPlan",
    "RunRecord",
    "Runner",
    "Scenario",
    "Task",
    "VerificationError",
    "WorkspaceError",
    "__version__",
    "build_plan",
    "build_report",
    "decide",
    "load_corpus",
    "load_scenario",
    "merge_bundles",
    "read_records",
    "shard_plan",
    "validate_paths",
    "verify_bundle",
    "write_bundle",
]


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'copeca_action' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
