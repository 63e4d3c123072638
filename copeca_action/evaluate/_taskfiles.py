"""The files a task names beside itself (its hidden tests, its reference fix)."""

from __future__ import annotations

from pathlib import Path

from copeca_action.errors import ConfigError
from copeca_action.scenario import leaves_task_folder


def beside_task(task_file: Path, rel: str, field: str) -> Path:
    """`rel` in the task's folder, a file that is really there: the task model refuses
    absolute paths and `..`, and a symbolic link that leads out of the folder (to
    /etc/passwd, a key file, another task's hidden tests) is refused here, naming the field."""
    if why := leaves_task_folder(task_file, rel):
        raise ConfigError(f"{task_file}: {field}: {why}")
    path = task_file.parent / rel
    if not path.is_file():
        raise ConfigError(f"{task_file}: {field}: file {rel} not found next to the task")
    return path
