from __future__ import annotations

from pathlib import Path

import pytest

from copeca_action.cli import main


def test_snapshot_fetch_list_verify_offline(tmp_path: Path, corpus_root: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    common = ["--cache", str(tmp_path), "--corpus", str(corpus_root)]
    assert main(["snapshot", "fetch", "fastapi", "--offline", *common]) == 0
    assert "7e20269603620e7d014d2ff600bd584f577e8c83" in capsys.readouterr().out
    assert main(["snapshot", "list", *common]) == 0
    assert "fastapi" in capsys.readouterr().out
    assert main(["snapshot", "verify", *common]) == 0
    assert "ok" in capsys.readouterr().out


def test_snapshot_fetch_offline_without_the_file_fails_clearly(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "repos.yaml").write_text(
        "repos:\n  gone:\n    language: python\n    sdist: {name: gone, version: '1.0', "
        f"sha256: {'a' * 64}}}\n")
    code = main(["snapshot", "fetch", "--offline", "--cache", str(tmp_path / "c"),
                 "--corpus", str(corpus)])
    assert code == 1
    assert "gone: FAILED" in capsys.readouterr().out


def test_a_relative_local_pin_is_read_beside_repos_yaml_from_any_folder(
        tmp_path: Path, origin_repo: tuple[Path, list[str]],
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`local: {path: ../origin}` was read from the current folder: the same benchmark
    fetched from its own folder and failed ("not a git repository") from any other."""
    repo, (_, head) = origin_repo
    corpus = tmp_path / "bench"
    corpus.mkdir()
    (corpus / "repos.yaml").write_text(
        f"repos:\n  app:\n    language: python\n    local: {{path: ../{repo.name}}}\n")
    elsewhere = tmp_path / "elsewhere" / "deeper"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    assert main(["snapshot", "fetch", "--cache", str(tmp_path / "cache"),
                 "--corpus", str(corpus)]) == 0
    assert f"app: local {head} ({repo})" in capsys.readouterr().out
