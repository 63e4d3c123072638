"""The run pipeline (prepare → execute → conclude), shared by the CLI and the GitHub layer."""

from copeca_action.pipeline._pipeline import (
    Prepared,
    conclude_prepared,
    execute,
    model_endpoint,
    prepare_scenario,
    reuse_offer,
)

__all__ = [
    "Prepared",
    "conclude_prepared",
    "execute",
    "model_endpoint",
    "prepare_scenario",
    "reuse_offer",
]
