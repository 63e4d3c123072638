"""`--corpus` and `list FOLDER` name a corpus: a folder holding repos.yaml (or corpus/ with
one). Anything else is refused naming the flag, before anything under it is walked (`--corpus /`
walked the whole file system; `list /etc/passwd` listed "0 tasks" and exited 0)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copeca_action.cli import main

DEMO = Path(__file__).parents[3] / "corpus" / "scenarios" / "demo.yaml"


@pytest.mark.parametrize("argv", [
    ["list", "{file}"], ["list", "{empty}"], ["list", "--corpus", "{missing}"],
    ["plan", str(DEMO), "--corpus", "{empty}"], ["plan", str(DEMO), "--corpus", "{file}"],
    ["check-task", "fastapi/locate-unique-id", "--repo-dir", "{empty}", "--corpus", "{empty}"],
    ["run", str(DEMO), "--corpus", "{empty}", "--out", "{out}"],
    ["snapshot", "fetch", "--corpus", "{empty}", "--cache", "{out}"],  # exited 0, did nothing
    ["snapshot", "list", "--corpus", "{file}", "--cache", "{out}"]])
def test_a_folder_that_is_no_corpus_is_refused_by_flag(
        argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "tasks").mkdir()
    (tmp_path / "file.yaml").write_text("name: x\n")
    paths = {"file": tmp_path / "file.yaml", "empty": tmp_path / "empty",
             "missing": tmp_path / "missing", "out": tmp_path / "out"}
    assert main([a.format(**paths) for a in argv]) == 2
    err = capsys.readouterr().err
    assert ("not a corpus folder" in err or "expected a corpus folder" in err
            or "no such folder" in err), err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_a_folder_inside_a_corpus_lists_that_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", str(DEMO.parents[1] / "tasks" / "fastapi"), "--json"]) == 0
    assert '"id": "fastapi/locate-unique-id"' in capsys.readouterr().out


def test_list_of_an_unknown_repository_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    # It printed "0 tasks" and exited 0, as if the repository had no tasks.
    assert main(["list", str(DEMO.parents[1]), "--repo", "fastapy"]) == 2
    err = capsys.readouterr().err
    assert "--repo" in err and "'fastapy'" in err and "fastapi" in err


def test_a_snapshot_cache_that_is_a_file_is_refused(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "cache").write_text("")
    assert main(["snapshot", "list", "--corpus", str(DEMO.parents[1]),
                 "--cache", str(tmp_path / "cache")]) == 2
    assert "--cache" in capsys.readouterr().err


def test_list_where_init_leaves_you_lists_the_benchmark(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # `init .` writes benchmark/ and prints its next commands from the repository's root;
    # `list` there listed the bundled corpus (25 tasks, none of the author's) as if it were
    # theirs. It now finds benchmark/ as it finds a checkout's corpus/.
    assert main(["init", str(tmp_path), "--kind", "mcp"]) == 0
    task = tmp_path / "benchmark" / "tasks" / "fastapi" / "locate-unique-id.yaml"
    mine = task.with_name("locate-mine.yaml")
    mine.write_text(task.read_text().replace("id: fastapi/locate-unique-id",
                                             "id: fastapi/locate-mine"))
    capsys.readouterr()
    monkeypatch.chdir(tmp_path)
    assert main(["list", "--repo", "fastapi", "--json"]) == 0
    ids = {t["id"] for t in json.loads(capsys.readouterr().out)}
    assert "fastapi/locate-mine" in ids and len(ids) == 13
    monkeypatch.chdir(tmp_path / "benchmark" / "tasks")  # below it, as before
    assert main(["list", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 13
