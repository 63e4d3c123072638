"""The script format: the example loads, bad scripts fail with file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from copeca_action.errors import ConfigError
from copeca_action.scripted import load_scripts


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def problems(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(ConfigError) as err:
        load_scripts(write(tmp_path, "s.yaml", text))
    return [str(p) for p in err.value.problems]


def test_example_scripts_load(scripts_dir: Path) -> None:
    ids = [s.id for s in load_scripts(scripts_dir)]
    assert "example/read-greeting/codesearch" in ids and "faults/http-400" in ids
    example = next(s for s in load_scripts(scripts_dir) if s.id == "example/edit-version")
    assert [a.kind for step in example.steps for a in step.tools] == ["read", "edit"]


def test_an_action_needs_exactly_one_key(tmp_path: Path) -> None:
    [msg] = problems(tmp_path, """\
scripts:
  - id: a
    match: {prompt_contains: x}
    steps:
      - tools:
          - {read: a.py, bash: ls}
      - answer: done
""")
    assert msg.startswith(f"{tmp_path / 's.yaml'}:6: scripts[0].steps[0].tools[0]")
    assert "exactly one of" in msg


def test_last_step_must_be_the_answer(tmp_path: Path) -> None:
    [msg] = problems(tmp_path, """\
scripts:
  - id: a
    match: {}
    steps:
      - answer: early
      - tools: [{bash: ls}]
""")
    assert ":2: scripts[0]" in msg and "only the last step may be an answer" in msg


def test_http_fault_needs_a_known_status_and_unknown_keys_are_named(tmp_path: Path) -> None:
    msgs = problems(tmp_path, """\
scripts:
  - id: a
    match: {prompt_contans: x}
    steps: [{answer: ok}]
    faults:
      - {kind: http, status: 418}
""")
    assert any(":3: scripts[0].match.prompt_contans: unknown key; allowed keys: marker" in m
               for m in msgs)
    assert any(":6: scripts[0].faults[0]" in m and "529" in m for m in msgs)


def test_wrong_answer_probability_needs_the_wrong_answer(tmp_path: Path) -> None:
    [msg] = problems(tmp_path, """\
scripts:
  - id: a
    match: {}
    steps: [{answer: ok}]
    variation: {wrong_answer_probability: 0.3}
""")
    assert "scripts[0].variation" in msg and "needs `wrong_answer`" in msg


def test_duplicate_ids_across_files(tmp_path: Path) -> None:
    body = "scripts:\n  - id: same\n    match: {}\n    steps: [{answer: ok}]\n"
    write(tmp_path, "a.yaml", body)
    write(tmp_path, "b.yaml", body)
    with pytest.raises(ConfigError, match="duplicate script id 'same'"):
        load_scripts(tmp_path)


def test_missing_folder_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such scripts file or folder"):
        load_scripts(tmp_path / "absent")
