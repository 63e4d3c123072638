"""`Transcript.ended`: the CLI's closing event is in its output. Recorded runs of each CLI
(tests/fixtures/transcripts): a finished run has ended, one stopped while it waited for the
model (`stall`, killed at its timeout) has not, nor a finished run's output cut before its
last line (as a harness killed mid-run finds it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from copeca_action.transcript import parse_transcript

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"
CLIS = {"claude": ("stream_json", None), "codex": ("codex_json", "codex_home"),
        "gemini": ("gemini_json", "config"), "qwen": ("qwen_json", "config"),
        "opencode": ("opencode_json", "config")}


def _where(cli: str, case: str) -> tuple[Path, Path | None]:
    if cli == "claude":
        return FIXTURES / f"claude_{case}.jsonl", None
    folder = FIXTURES / f"{cli}_{case}"
    config = CLIS[cli][1]
    return folder / "stdout.jsonl", folder / config if config else None


@pytest.mark.parametrize("cli", sorted(CLIS))
@pytest.mark.parametrize("case", ["ok", "edit"])
def test_a_finished_run_has_ended(cli: str, case: str) -> None:
    stdout, config = _where(cli, case)
    assert parse_transcript(CLIS[cli][0], stdout, config).ended


@pytest.mark.parametrize("cli", sorted(CLIS))
def test_a_stalled_run_has_not_ended(cli: str) -> None:
    stdout, config = _where(cli, "stall")
    assert not parse_transcript(CLIS[cli][0], stdout, config).ended


@pytest.mark.parametrize("cli", ["claude", "gemini", "qwen"])
def test_an_output_cut_before_its_last_line_has_not_ended(cli: str, tmp_path: Path) -> None:
    stdout, config = _where(cli, "ok")
    cut = tmp_path / "stdout.jsonl"
    cut.write_text("".join(stdout.read_text().splitlines(keepends=True)[:-1]))
    assert not parse_transcript(CLIS[cli][0], cut, config).ended
