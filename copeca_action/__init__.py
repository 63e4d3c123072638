"""copeca-action: is an agent tool cheaper or dearer per correct answer?

The public API: the contracts of each stage and the verbs that connect them.
"""

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
