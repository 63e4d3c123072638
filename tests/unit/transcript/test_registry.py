from __future__ import annotations

from pathlib import Path

import pytest

from copeca_action.errors import ConfigError
from copeca_action.scenario import KNOWN_PARSERS, load_runner
from copeca_action.transcript import PARSERS, parse_transcript

ROOT = Path(__file__).resolve().parents[3]


def test_registry_names_are_the_known_parsers() -> None:
    assert sorted(PARSERS) == sorted(KNOWN_PARSERS)


def test_unknown_parser_name_lists_the_known_ones(tmp_path: Path) -> None:
    known = "codex_json, gemini_json, opencode_json, qwen_json, stream_json"
    with pytest.raises(ConfigError, match=known):
        parse_transcript("xml", tmp_path / "out.jsonl")


def test_bundled_runners_name_registered_parsers() -> None:
    for name in ("claude", "codex", "gemini", "qwen", "opencode"):
        runner = load_runner(ROOT / "runners" / f"{name}.yaml")
        assert runner.parser in PARSERS


def test_runner_with_unknown_parser_fails_at_load(tmp_path: Path) -> None:
    text = (ROOT / "runners" / "codex.yaml").read_text().replace("parser: codex_json",
                                                                 "parser: xml_lines")
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_runner(path)
    message = str(err.value)
    assert "parser" in message and "xml_lines" in message and "bad.yaml" in message
