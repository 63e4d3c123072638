"""`copeca-action run` holds its output folder's lock from the first run to the bundle: a
second `run` on the folder while the first writes its report and bundle is refused, never
interleaved with it (its runs appended to a results.jsonl a bundle is being made of)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workspace"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from reuse_world import make_world

from copeca_action._cli import run as run_cli
from copeca_action.conclude import Concluded
from copeca_action.engine import OutputDir
from copeca_action.errors import ConfigError
from copeca_action.pipeline import Prepared


def test_a_second_run_is_refused_while_the_first_writes_its_bundle(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    world = make_world(tmp_path)
    out = tmp_path / "out"
    seen: list[str] = []
    real = run_cli.conclude_prepared

    def concluding(prep: Prepared, *args: object, **kwargs: object) -> Concluded:
        other = OutputDir(out)  # what a second `run --resume` on the folder does first
        try:
            other.acquire()
        except ConfigError as exc:
            seen.append(str(exc))
        else:
            other.release()
            seen.append("acquired")
        return real(prep, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(run_cli, "conclude_prepared", concluding)
    assert world.run("out") == 0
    assert len(seen) == 1 and "is in use by another copeca-action run" in seen[0], seen
    second = OutputDir(out)  # released once the bundle is written
    second.acquire()
    second.release()


def test_the_lock_is_re_entrant_within_one_run(tmp_path: Path) -> None:
    out = OutputDir(tmp_path / "out")
    with out.held():
        out.acquire()  # the engine, inside the pipeline's hold
        out.release()
        with pytest.raises(ConfigError, match="in use"):
            OutputDir(tmp_path / "out").acquire()
    after = OutputDir(tmp_path / "out")
    after.acquire()
    after.release()
