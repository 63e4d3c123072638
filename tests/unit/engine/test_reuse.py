"""`run --reuse`: a real plan run and bundled (signed), then run again with the bundle:
unchanged runs are copied (record and files), changed ones run, the new bundle verifies."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest
import yaml
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from reuse_world import World, make_world, pem

from copeca_action._util.hashing import sha256_file
from copeca_action.bundle import verify_bundle
from copeca_action.engine import OutputDir, ReuseOffer, adopt
from copeca_action.engine._fingerprint import VERSION
from copeca_action.errors import VerificationError
from copeca_action.plan import RunPlan
from copeca_action.records import RunRecord
from copeca_action.workspace import folder_content_id


@pytest.fixture
def world(tmp_path: Path) -> World:
    w = make_world(tmp_path)
    assert w.run("first") == 0
    return w


def _by_arm(records: list[RunRecord]) -> dict[str, list[RunRecord]]:
    out: dict[str, list[RunRecord]] = {}
    for r in records:
        out.setdefault(r.arm, []).append(r)
    return out


def _reused(records: list[RunRecord]) -> dict[str, bool]:
    """(task, arm) → whether the run was copied rather than run."""
    return {f"{r.task_id}|{r.arm}": r.reused_from is not None for r in records}


ALL = {"app/one|baseline", "app/one|tool", "app/two|baseline", "app/two|tool"}


def test_nothing_changed_reuses_every_run_and_the_new_bundle_verifies(world: World) -> None:
    first = world.bundle("first")
    sha = sha256_file(first)
    assert all(r.fingerprint for r in world.records("first"))
    assert world.run("second", "--reuse", str(first)) == 0
    records = world.records("second")
    assert {r.reused_from for r in records} == {sha} and len(records) == 4
    old = {r.run_id: r for r in world.records("first")}
    for r in records:  # the measurement itself is unchanged
        assert r.model_copy(update={"reused_from": None}) == old[r.run_id]
    assert not (world.root / "second" / "model-requests.jsonl").exists()
    verified = verify_bundle(world.bundle("second"), world.private.public_key())
    assert len(verified.records) == 4
    with zipfile.ZipFile(first) as a, zipfile.ZipFile(world.bundle("second")) as b:
        rid = records[0].run_id
        assert a.read(f"runs/{rid}/stdout.jsonl") == b.read(f"runs/{rid}/stdout.jsonl")
    warnings = world.report("second")["warnings"]
    assert any("4 of 4 run(s) reused" in w and sha in w for w in warnings), warnings


def test_a_changed_tool_reruns_the_tool_arm_only(world: World) -> None:
    world.edit_tool("print('v2')\n")
    assert world.run("second", "--reuse", str(world.bundle("first"))) == 0
    records = world.records("second")
    assert {k for k, v in _reused(records).items() if v} == {"app/one|baseline",
                                                             "app/two|baseline"}
    old = {r.run_id: r.fingerprint for r in world.records("first")}
    for r in _by_arm(records)["tool"]:
        assert r.fingerprint is not None and r.fingerprint != old[r.run_id]
    verify_bundle(world.bundle("second"), world.private.public_key())


def test_an_uncommitted_edit_counts_as_a_change_but_untracked_files_do_not(
        world: World) -> None:
    clean = folder_content_id(world.tool)
    assert clean.startswith("tree:")
    (world.tool / "notes.txt").write_text("an untracked file\n")
    assert folder_content_id(world.tool) == clean
    world.edit_tool("print('dirty')\n", commit=False)
    assert folder_content_id(world.tool).startswith("files:")
    assert world.run("second", "--reuse", str(world.bundle("first"))) == 0
    assert sum(_reused(world.records("second")).values()) == 2


def test_a_new_cli_version_reuses_nothing(world: World) -> None:
    world.set_version("1.2.4")
    assert world.run("second", "--reuse", str(world.bundle("first"))) == 0
    assert not any(_reused(world.records("second")).values())


def test_a_changed_runner_definition_reuses_nothing(world: World) -> None:
    world.edit_yaml(world.runner, isolation_env={"NO_TELEMETRY": "1"})
    assert world.run("second", "--reuse", str(world.bundle("first"))) == 0
    assert not any(_reused(world.records("second")).values())


def test_a_changed_mode_reruns_its_arm(world: World) -> None:
    world.edit_yaml(world.corpus / "modes" / "tool.yaml",
                    env={"TOOL_HOME": "{tool_dir}", "TOOL_LEVEL": "2"})
    assert world.run("second", "--reuse", str(world.bundle("first"))) == 0
    reused = _reused(world.records("second"))
    assert {k for k, v in reused.items() if v} == {"app/one|baseline", "app/two|baseline"}


def test_a_changed_task_reruns_that_task(world: World) -> None:
    path = world.corpus / "tasks" / "app" / "two.yaml"
    task = yaml.safe_load(path.read_text())
    world.edit_yaml(path, prompt=task["prompt"] + " Be brief.")
    assert world.run("second", "--reuse", str(world.bundle("first"))) == 0
    reused = _reused(world.records("second"))
    assert set(reused) == ALL
    assert {k for k, v in reused.items() if v} == {"app/one|baseline", "app/one|tool"}


def test_a_changed_run_setting_reuses_nothing(world: World) -> None:
    world.edit_yaml(world.scenario, max_turns=7)
    assert world.run("second", "--reuse", str(world.bundle("first"))) == 0
    assert not any(_reused(world.records("second")).values())


def test_a_tampered_bundle_contributes_nothing(world: World,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    first = world.bundle("first")
    bad = world.root / "tampered.copeca"
    rid = world.records("first")[0].run_id
    with zipfile.ZipFile(first) as src, zipfile.ZipFile(bad, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == f"runs/{rid}/stdout.jsonl":
                data = data.replace(b"42", b"43")
            dst.writestr(info, data)
    assert world.run("second", "--reuse", str(bad)) == 0
    assert not any(_reused(world.records("second")).values())
    err = capsys.readouterr().err
    assert "tampered.copeca was not reused" in err and "does not verify" in err
    verify_bundle(world.bundle("second"), world.private.public_key())


def test_a_bundle_signed_by_another_key_is_refused(world: World,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    other = world.root / "other.pem"
    other.write_bytes(pem(Ed25519PrivateKey.generate()))
    out = world.root / "second"
    code = world.run("second", "--reuse", str(world.bundle("first")), "--key", str(other))
    assert code == 0 and (out / "s.copeca").is_file()
    assert not any(_reused(world.records("second")).values())
    assert "does not verify" in capsys.readouterr().err


def test_reused_runs_do_not_use_up_the_budget_but_count_in_spend(world: World) -> None:
    """Each run costs 0.5. With the two reused baseline runs counted against a 1.2 budget,
    the two tool runs could not start; counted as free, both run. Spend stays measured."""
    world.edit_tool("print('v2')\n")
    assert world.run("second", "--reuse", str(world.bundle("first")),
                     "--budget-usd", "1.2") == 0
    records = world.records("second")
    assert [r.outcome for r in records] == ["ok"] * 4
    spend = {a["arm"]: a["spend_usd"] for a in world.report("second")["arms"]}
    assert spend == {"baseline": pytest.approx(1.0), "tool": pytest.approx(1.0)}


def test_fingerprints_carry_their_format_version() -> None:
    assert VERSION == 1  # bump it when the parts change (docs/reuse.md)


def test_a_run_whose_files_fail_their_check_stops_the_adoption(world: World) -> None:
    """A file that no longer matches the verified manifest: that run gets no record and no
    folder, and nothing after it is taken (the bundle changed under us)."""
    first = world.records("first")
    plan = RunPlan.model_validate_json((world.root / "first" / "plan.json").read_text())
    out = OutputDir(world.root / "second")
    out.claim(plan, "name: s\n", resume=False)
    fps = {r.run_id: r.fingerprint for r in first}
    bad = plan.runs[1].run_id

    def extract(run_id: str, dest: Path) -> None:
        (dest / "stdout.jsonl").write_text("{}\n")
        if run_id == bad:
            raise VerificationError("tampered", "changed after verification")

    offer = ReuseOffer(sha256="f" * 64, name="prev.copeca",
                       records={r.run_id: r for r in first}, extract=extract)
    result = adopt(out, plan, "s", offer, fps)
    assert result.reused == 1 and result.error and "changed after" in result.message()
    assert [r.run_id for r in out.records()] == [plan.runs[0].run_id]
    assert not out.run_dir(bad).exists()


def test_a_cli_that_prints_no_version_is_never_reused(world: World) -> None:
    world.set_version("unknown")
    assert world.run("second") == 0
    assert all(r.fingerprint is None for r in world.records("second"))
    assert world.run("third", "--reuse", str(world.bundle("second"))) == 0
    assert not any(_reused(world.records("third")).values())


def test_an_output_folder_inside_a_tool_folder_outside_git_is_not_the_tool(
        tmp_path: Path) -> None:
    """A tool folder outside git is hashed whole, but the run's own output folder in it is
    the harness's: a resumed run (results grown, run folders written) has the same tool."""
    w = make_world(tmp_path)
    shutil.rmtree(w.tool / ".git")
    out = w.tool / "out"
    assert w.run("tool/out") == 0
    first = {r.run_id: r for r in w.records("tool/out")}
    lines = (out / "results.jsonl").read_text().splitlines(keepends=True)
    dropped = next(r for r in first.values() if r.arm == "tool")
    (out / "results.jsonl").write_text("".join(
        line for line in lines if dropped.run_id not in line))
    shutil.rmtree(out / "runs" / dropped.run_id)
    assert w.run("tool/out", "--resume") == 0
    again = {r.run_id: r for r in w.records("tool/out")}[dropped.run_id]
    assert again.fingerprint is not None and again.fingerprint == dropped.fingerprint


def test_an_agent_a_killed_harness_left_is_not_replaced_by_a_reused_run(world: World) -> None:
    """A folder whose harness died while an agent ran (its output there, no record), then
    resumed with --reuse: copying the bundle's run over the folder dropped what that agent
    spent. The run is not reused: its attempt is recorded and it runs again here."""
    assert world.run("second") == 0
    out = world.root / "second"
    lost = world.records("second")[0]
    lines = (out / "results.jsonl").read_text().splitlines(keepends=True)
    (out / "results.jsonl").write_text("".join(lines[1:]))
    (out / "runs" / lost.run_id / "record.json").unlink()  # as a kill mid-agent leaves it
    assert world.run("second", "--resume", "--reuse", str(world.bundle("first"))) == 0
    mine = [r for r in world.records("second") if r.run_id == lost.run_id]
    assert [(r.outcome, r.reused_from, r.cost_usd) for r in mine] == [
        ("infra_error", None, 0.5), ("ok", None, 0.5)]
    assert sum(r.cost_usd or 0 for r in world.records("second")) == pytest.approx(2.5)
