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
