"""A plain `pip install` of the wheel is fully functional: it carries corpus/ and runners/."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out),
                    str(root)], check=True)
    (found,) = out.glob("copeca_action-*.whl")
    return found


def test_wheel_bundles_corpus_runners_and_schemas(wheel: Path, root: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    tasks = {p.relative_to(root / "corpus").as_posix() for p in (root / "corpus").rglob("*.yaml")}
    assert tasks and all(f"copeca_action/_data/corpus/{t}" in names for t in tasks)
    runners = {p.name for p in (root / "runners").glob("*.yaml")}
    assert runners >= {"claude.yaml", "codex.yaml", "gemini.yaml", "qwen.yaml", "opencode.yaml"}
    assert all(f"copeca_action/_data/runners/{r}" in names for r in runners)
    assert "copeca_action/_data/runners/package-lock.json" in names
    assert not any("node_modules" in n for n in names)  # the installed CLIs stay out
    assert wheel.stat().st_size < 20 * 1024 * 1024
    assert "copeca_action/_data/schemas/task.schema.json" in names
    assert "copeca_action/scenario/data/contamination.yaml" in names
    assert {"copeca_action/render/templates/report.html.j2",
            "copeca_action/render/templates/report.css",
            "copeca_action/render/templates/report.js"} <= names


def test_installed_wheel_validates_its_packaged_corpus(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    subprocess.run([bin_dir / "python", "-m", "pip", "install", "-q", str(wheel)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    work = tmp_path / "elsewhere"
    work.mkdir()  # far from the checkout: only the packaged data can be found
    done = subprocess.run([bin_dir / "copeca-action", "validate"], cwd=work, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok: ")
    assert "site-packages/copeca_action/_data/corpus" in subprocess.run(
        [bin_dir / "python", "-c", "from copeca_action._util.paths import corpus_dir;"
         "print(corpus_dir())"], cwd=work, env=env, capture_output=True, text=True).stdout
    demo = subprocess.run(
        [bin_dir / "python", "-c", "from copeca_action._util.paths import corpus_dir;"
         "print(corpus_dir() / 'scenarios' / 'demo.yaml')"],
        cwd=work, env=env, capture_output=True, text=True, check=True).stdout.strip()
    plan = subprocess.run([bin_dir / "copeca-action", "plan", demo, "--shard", "1/2", "--json"],
                          cwd=work, env=env, capture_output=True, text=True)
    assert plan.returncode == 0, plan.stderr
    assert '"shard"' in plan.stdout
