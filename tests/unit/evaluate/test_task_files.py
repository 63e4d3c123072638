"""A task's hidden tests and reference fix are files in its folder: a symbolic link there
that leads out (to /etc/passwd, a key file) is refused where they are read, naming the
field, as `..` and absolute paths are refused at load."""

from __future__ import annotations

from pathlib import Path

import pytest

from copeca_action.errors import ConfigError
from copeca_action.evaluate._taskfiles import beside_task


def test_a_link_out_of_the_task_folder_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("harness secret\n")
    task = tmp_path / "corpus" / "tasks" / "t1"
    (task / "patches").mkdir(parents=True)
    task_file = task / "task.yaml"
    task_file.write_text("id: t1\n")
    (task / "patches" / "tests.patch").symlink_to(outside)
    with pytest.raises(ConfigError) as info:
        beside_task(task_file, "patches/tests.patch", "grading.patch.tests_patch")
    message = str(info.value)
    assert "grading.patch.tests_patch" in message and "leads out of the task's folder" in message
    # a link that stays in the folder, and a plain file, are read
    (task / "patches" / "real.patch").write_text("diff\n")
    (task / "patches" / "alias.patch").symlink_to(task / "patches" / "real.patch")
    assert beside_task(task_file, "patches/alias.patch", "f").read_text() == "diff\n"
    with pytest.raises(ConfigError, match="not found next to the task"):
        beside_task(task_file, "patches/absent.patch", "f")


def test_a_dockerfile_linked_out_of_the_corpus_is_never_built(tmp_path: Path) -> None:
    """Its folder is the build context: a link to a file in / sent / to the engine. Refused
    before any engine is asked, naming repos.yaml and the field."""
    from copeca_action.evaluate._resolve import CorpusResolver
    from copeca_action.scenario import load_corpus

    root = tmp_path / "corpus"
    root.mkdir()
    (tmp_path / "Dockerfile").write_text("FROM scratch\n")
    (root / "Dockerfile").symlink_to(tmp_path / "Dockerfile")
    (root / "repos.yaml").write_text("repos:\n  mine:\n    language: python\n"
                                     "    local: {path: mine}\n    dockerfile: Dockerfile\n")
    resolver = CorpusResolver(load_corpus(root).require_ok(), {}, backend="docker")
    with pytest.raises(ConfigError) as info:
        resolver.sandbox("mine")
    assert "repos.mine.dockerfile: Dockerfile leads out of the corpus" in str(info.value)
