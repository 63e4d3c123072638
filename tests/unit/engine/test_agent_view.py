"""When bubblewrap does not work, agents run under `unshare`: a pid namespace, but every file
of the harness in sight. The job says so: a warning when it starts, a flag on each run, a
line in the report's warnings."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_helpers import config, fake, make_corpus, scenario

from copeca_action.agent import _process
from copeca_action.conclude._report import isolation_note
from copeca_action.engine import run_plan
from copeca_action.plan import build_plan
from copeca_action.records import read_records

_real_works = _process._works


@pytest.mark.skipif(not _real_works(_process.UNSHARE_AGENT[0])
                    and not _real_works(_process.UNSHARE_AGENT[1]),
                    reason="unshare cannot make a pid namespace here")
def test_under_unshare_the_job_says_agents_could_read_its_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_process, "_works",
                        lambda argv: argv[0] != "bwrap" and _real_works(argv))
    levels = _process.agent_isolation()[1]
    assert levels[:2] == ["unshare", "pidns"]
    corpus = make_corpus(tmp_path, {"q": {"prompt": fake(answer="42")}})
    cfg = config(tmp_path, corpus, scenario())
    stats = run_plan(cfg, build_plan(cfg.scenario, cfg.corpus.tasks), resume=False,
                     scenario_text="name: t\n")
    assert any("bubblewrap does not work here" in w and "signing-key file" in w
               and "transcripts" in w for w in stats.warnings)
    if "harness-ro" in levels:  # the harness's files read-only, keys masked: said so
        assert any("read-only" in w and "read empty" in w for w in stats.warnings)
    records = read_records(cfg.out.results)
    assert records and all("agent_files_visible" in r.flags for r in records)
    assert all("agent_not_isolated" not in r.flags for r in records)  # the pid ns holds
    note = isolation_note(records)
    assert note is not None and "could read the harness's files" in note


def test_under_bubblewrap_nothing_is_said(tmp_path: Path) -> None:
    if _process.agent_isolation()[1][:1] != ["bwrap"]:
        pytest.skip("bubblewrap does not work here")
    assert _process.files_visible_warning() is None
    corpus = make_corpus(tmp_path, {"q": {"prompt": fake(answer="42")}})
    cfg = config(tmp_path, corpus, scenario())
    stats = run_plan(cfg, build_plan(cfg.scenario, cfg.corpus.tasks), resume=False,
                     scenario_text="name: t\n")
    assert not any("not confined" in w for w in stats.warnings)
    assert all("agent_files_visible" not in r.flags for r in read_records(cfg.out.results))


def _unshare_with_mounts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Agents under the `unshare` fallback with its read-only mounts (bubblewrap set aside);
    skipped where unshare cannot make a pid namespace or mount."""
    if not any(_real_works(v) for v in _process.UNSHARE_AGENT):
        pytest.skip("unshare cannot make a pid namespace here")
    monkeypatch.setattr(_process, "_works",
                        lambda argv: argv[0] != "bwrap" and _real_works(argv))
    if "harness-ro" not in _process.agent_isolation()[1]:
        pytest.skip("unshare cannot mount here")


def test_under_unshare_a_mount_that_fails_is_an_infra_error_before_the_agent_starts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _unshare_with_mounts(monkeypatch)
    guarded = tmp_path / "guarded"
    guarded.mkdir()
    monkeypatch.setattr(_process, "unshare_view",  # /dev/null cannot cover a folder
                        lambda writable: ["file", str(guarded), ""])
    started = tmp_path / "started"
    corpus = make_corpus(tmp_path, {"q": {"prompt": fake(answer="42", touch=str(started))}})
    cfg = config(tmp_path, corpus, scenario())
    run_plan(cfg, build_plan(cfg.scenario, cfg.corpus.tasks), resume=False,
             scenario_text="name: t\n")
    records = read_records(cfg.out.results)
    assert records and all(r.outcome == "infra_error" for r in records)
    assert all("sandbox" in (r.error or "") and "never started" in (r.error or "")
               and str(guarded) in (r.error or "") for r in records), records[0].error
    assert not started.exists()


def test_under_unshare_a_folder_gone_since_it_was_listed_is_not_a_failure(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another harness's folder of git views, listed to be made read-only, removed as that
    harness exits before this agent's mounts are made: nothing is left to guard, so the agent
    starts (it was an infra error, retried, under parallel harnesses)."""
    _unshare_with_mounts(monkeypatch)
    kept = tmp_path / "kept"
    kept.mkdir()
    monkeypatch.setattr(_process, "unshare_view", lambda writable: [
        "ro", str(tmp_path / "copeca-git-gone"), "", "ro", str(kept), ""])
    corpus = make_corpus(tmp_path, {"q": {"prompt": fake(
        answer="42", touch=str(kept / "written"))}})
    cfg = config(tmp_path, corpus, scenario())
    run_plan(cfg, build_plan(cfg.scenario, cfg.corpus.tasks), resume=False,
             scenario_text="name: t\n")
    records = read_records(cfg.out.results)
    assert records and all(r.outcome != "infra_error" for r in records), records[0].error
    assert not (kept / "written").exists()  # the mounts after it were made: read-only
