"""A harness killed by SIGKILL leaves its folder of git views (`copeca-git-*` in the
temporary folder) behind, with links into the snapshot cache. The next harness sweeps such
folders when it makes its own: only real folders of this user whose recorded owner is dead;
never a live run's, never through a link, never one without an owner."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from workspace_helpers import sh

import copeca_action

REPO_ROOT = Path(copeca_action.__file__).resolve().parents[1]
HOLD_VIEWS = ("import sys, time\nfrom pathlib import Path\n"
              "from copeca_action.workspace._git import store_view\n"
              "print(store_view(Path(sys.argv[1])).parent, flush=True)\ntime.sleep(120)\n")


def _env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(REPO_ROOT)}


def test_views_of_a_killed_harness_are_swept_and_nothing_else(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    src = tmp_path / "src"
    src.mkdir()
    sh("git", "init", "-q", "-b", "main", cwd=src)
    (src / "a.txt").write_text("a\n")
    sh("git", "add", ".", cwd=src)
    sh("git", "commit", "-q", "-m", "one", cwd=src)
    store = tmp_path / "store.git"
    sh("git", "clone", "-q", "--bare", str(src), str(store))
    objects_before = sorted(p.name for p in (store / "objects").rglob("*"))

    def holder() -> tuple[subprocess.Popen[str], Path]:
        proc = subprocess.Popen([sys.executable, "-c", HOLD_VIEWS, str(store)],
                                env=_env(tmp), stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        return proc, Path(proc.stdout.readline().strip())

    live, live_root = holder()
    killed, killed_root = holder()
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    try:
        assert killed_root.is_dir() and live_root.is_dir() and killed_root != live_root
        dead_owner = (killed_root / "owner.json").read_text()
        # look-alikes that must stay: a link to a folder with a dead owner, a folder
        # without an owner (being set up, or an older version's), another user's folder
        victim = tmp_path / "victim"
        victim.mkdir()
        (victim / "owner.json").write_text(dead_owner)
        (tmp / "copeca-git-link").symlink_to(victim)
        (tmp / "copeca-git-noowner").mkdir()
        others = tmp / "copeca-git-others"
        others.mkdir()
        (others / "owner.json").write_text(dead_owner)
        if os.getuid() == 0:
            os.chown(others, 65534, 65534)
        else:
            shutil.rmtree(others)
        fresh = subprocess.run(
            [sys.executable, "-c", "from copeca_action.workspace._git import views_root\n"
             "print(views_root())"], env=_env(tmp), capture_output=True, text=True, check=True)
        assert not killed_root.exists()
        assert live_root.is_dir() and any(live_root.glob("store-*"))
        assert (victim / "owner.json").is_file() and (tmp / "copeca-git-link").is_symlink()
        assert (tmp / "copeca-git-noowner").is_dir()
        assert os.getuid() != 0 or others.is_dir()
        assert not Path(fresh.stdout.strip()).exists()  # its own, removed at its exit
        assert sorted(p.name for p in (store / "objects").rglob("*")) == objects_before
        sh("git", "--git-dir", str(store), "fsck", "--no-dangling", cwd=tmp_path)
        owner = json.loads((live_root / "owner.json").read_text())
        assert owner["pid"] == live.pid
    finally:
        live.kill()
        live.wait()
