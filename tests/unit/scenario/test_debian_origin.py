"""The `debian` origin: pins parse, must agree with git, and fence tasks into identical paths."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from copeca_action.scenario import DebianPin, RepoSpec, load_corpus, validate_paths

COMMIT = "af6b6c543b224d348a8876f0c06245d9ea7929c5"
PIN = {"package": "rust-ripgrep", "version": "13.0.0", "sha256": "f" * 64,
       "upstream_commit": COMMIT}


def test_a_debian_pin_alone_is_an_origin_and_names_its_pool_file() -> None:
    spec = RepoSpec.model_validate({"language": "rust", "debian": PIN})
    assert spec.debian is not None
    assert spec.debian.filename == "rust-ripgrep_13.0.0.orig.tar.gz"
    assert DebianPin.model_validate({**PIN, "version": "4.18.2+~4.17.14"}).filename.endswith(
        "_4.18.2+~4.17.14.orig.tar.gz")


def test_upstream_commit_must_equal_the_git_pin() -> None:
    git = {"url": "https://example.invalid/r", "commit": "0" * 40}
    with pytest.raises(ValidationError, match=r"differs from git\.commit"):
        RepoSpec.model_validate({"language": "rust", "debian": PIN, "git": git})
    RepoSpec.model_validate({"language": "rust", "debian": PIN,
                             "git": {**git, "commit": COMMIT}})


@pytest.mark.parametrize("bad", [{"sha256": "abc"}, {"upstream_commit": "13.0.0"},
                                 {"package": ""}])
def test_malformed_pins_are_refused(bad: dict[str, str]) -> None:
    with pytest.raises(ValidationError):
        DebianPin.model_validate({**PIN, **bad})


def _corpus(tmp_path: Path, gold_file: str) -> Path:
    root = tmp_path / "corpus"
    (root / "tasks" / "rg").mkdir(parents=True)
    (root / "repos.yaml").write_text(yaml.safe_dump({"repos": {"rg": {
        "language": "rust", "debian": {**PIN, "identical_paths": ["crates/core/", "build.rs"]}}}}))
    (root / "tasks" / "rg" / "t.yaml").write_text(yaml.safe_dump({
        "id": "rg/t", "repo": "rg", "type": "comprehension", "category": "locate",
        "language": "rust", "prompt": "Where is the configuration file read?",
        "source": {"origin": "original"}, "grading": {"answer": {"required": ["args"]}},
        "gold_context": [{"file": gold_file, "lines": [1, 2]}]}))
    return root


@pytest.mark.parametrize("gold_file", ["crates/core/config.rs", "build.rs"])
def test_tasks_inside_identical_paths_pass(tmp_path: Path, gold_file: str) -> None:
    result = validate_paths([_corpus(tmp_path, gold_file)])
    assert result.ok, [str(e) for e in result.errors]


def test_a_task_outside_identical_paths_is_named(tmp_path: Path) -> None:
    result = validate_paths([_corpus(tmp_path, "crates/globset/src/glob.rs")])
    assert not result.ok
    message = str(result.errors[0])
    assert "t.yaml" in message and "gold_context[0].file" in message
    assert "crates/globset/src/glob.rs is outside" in message


def test_bundled_repos_pin_debian_tarballs_of_the_same_tags(corpus_root: Path) -> None:
    repos = load_corpus(corpus_root).repos
    for name in ("express", "gin", "ripgrep"):
        spec = repos[name]
        assert spec.debian is not None and spec.git is not None
        assert spec.debian.upstream_commit == spec.git.commit


def test_a_pin_names_its_upstream_by_commit_or_by_tag() -> None:
    bare = {k: v for k, v in PIN.items() if k != "upstream_commit"}
    with pytest.raises(ValidationError, match=r"upstream_commit .* or, when"):
        DebianPin.model_validate(bare)
    pin = DebianPin.model_validate({**bare, "upstream_tag": "jsoup-1.15.3", "compression": "xz"})
    assert pin.filename == "rust-ripgrep_13.0.0.orig.tar.xz"
    with pytest.raises(ValidationError):
        DebianPin.model_validate({**PIN, "compression": "zst"})
