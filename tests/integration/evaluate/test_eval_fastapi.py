"""`copeca-action eval` and `check-task` on real patches against the real fastapi sdist."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from copeca_action.cli import main
from copeca_action.evaluate import read_eval

DATA = Path(__file__).resolve().parents[2] / "data" / "patcheval"


@pytest.fixture
def fastapi_env(fastapi_python: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`python` in the sandbox is the venv's (PATH is passed through; nothing else is)."""
    monkeypatch.setenv("PATH", f"{fastapi_python}{os.pathsep}{os.environ['PATH']}")


@pytest.mark.slow
@pytest.mark.usefixtures("fastapi_env")
def test_eval_logs_tree_on_fastapi(fastapi_checkout: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(DATA / "logs", logs)
    code = main(["eval", "-n", "demo", "--logs", str(logs), "--corpus", str(DATA / "corpus"),
                 "--repo-dir", f"fastapi={fastapi_checkout}", "-c", "2"])
    assert code == 1  # one run is a harness error (feature 4's tests patch is broken)
    run = logs / "demo"
    solo = read_eval(run / "solo/fastapi/opid/f1_f2/eval.json")
    assert solo is not None and solo.status == "pass"
    assert solo.feature2 is not None and (solo.feature2.tests_passed, solo.feature2.framework) \
        == (5, "pytest")
    assert [d.path for d in solo.patches["solo"].dropped] == [
        "tests/test_tutorial/test_first_steps/test_tutorial001.py"]
    coop = read_eval(run / "coop/fastapi/opid/f1_f2/eval.json")
    assert coop is not None and coop.merge is not None
    assert (coop.merge.status, coop.merge.strategy, coop.merge.conflicted_files) == (
        "conflict", "union", ["fastapi/utils.py"])
    assert coop.status == "pass"
    wrong = read_eval(run / "solo/fastapi/opid/f1_f3/eval.json")
    assert wrong is not None and wrong.status == "fail" and wrong.error is None
    assert wrong.feature1 is not None and wrong.feature1.passed
    assert wrong.feature2 is not None and wrong.feature2.tests_failed == 1
    broken = read_eval(run / "solo/fastapi/opid/f2_f4/eval.json")
    assert broken is not None and broken.status == "error"
    summary = json.loads((run / "eval_summary.json").read_text())
    assert (summary["passed"], summary["failed"], summary["errors"]) == (2, 1, 1)
    assert summary["pass_rate"] == pytest.approx(2 / 3, abs=1e-6)


@pytest.mark.slow
@pytest.mark.usefixtures("fastapi_env")
def test_check_task_on_fastapi(fastapi_checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-task", "fastapi/opid/f2", "--corpus", str(DATA / "corpus"),
                 "--repo-dir", str(fastapi_checkout)]) == 0
    assert "ok: fastapi/opid/f2 (patch)" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.container
def test_eval_on_fastapi_in_containers(fastapi_checkout: Path, fastapi_image: str,
                                       docker_host: str, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The same tree with the docker backend: the same verdicts, from inside containers."""
    logs = tmp_path / "logs"
    shutil.copytree(DATA / "logs", logs)
    monkeypatch.setenv("DOCKER_HOST", docker_host)
    code = main(["eval", "-n", "demo", "--logs", str(logs), "--corpus", str(DATA / "corpus"),
                 "--repo-dir", str(fastapi_checkout), "--backend", "docker", "--image",
                 fastapi_image, "-c", "2"])
    assert code == 1
    summary = json.loads((logs / "demo/eval_summary.json").read_text())
    assert (summary["passed"], summary["failed"], summary["errors"]) == (2, 1, 1)
    solo = read_eval(logs / "demo/solo/fastapi/opid/f1_f2/eval.json")
    assert solo is not None and solo.backend == "docker" and "network-none" in solo.isolation
