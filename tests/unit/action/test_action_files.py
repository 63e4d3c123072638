"""action.yml, the Dockerfile, the workflows and the examples: linted and cross-checked."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from copeca_action.github import OUTPUT_NAMES, PARSERS
from copeca_action.github._scaffold import KINDS, scaffold

ROOT = Path(__file__).resolve().parents[3]
ACTION = ROOT / "action.yml"
DOCKERFILE = ROOT / "Dockerfile"
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
EXAMPLES = sorted(p for p in (ROOT / "docs" / "examples").glob("*.yml")
                  if not p.name.startswith("."))
EXAMPLE_ZIZMOR = ROOT / "docs" / "examples" / ".zizmor.yml"
SHA_PIN = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")


def tool(name: str) -> str:
    """A linter from the venv (dev extra) or PATH; skip the test when it is absent."""
    local = Path(sys.executable).parent / name
    found = str(local) if local.exists() else shutil.which(name)
    if not found:
        pytest.skip(f"{name} is not installed (pip install -e '.[dev]')")
    return found


def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


def action() -> dict:  # type: ignore[type-arg]
    data = yaml.safe_load(ACTION.read_text())
    assert isinstance(data, dict)
    return data


def test_action_yml_matches_github_schema() -> None:
    result = run([tool("check-jsonschema"), "--builtin-schema", "vendor.github-actions",
                  str(ACTION)])
    assert result.returncode == 0, result.stdout + result.stderr


def test_workflows_and_examples_match_github_schema(tmp_path: Path) -> None:
    scaffold(tmp_path, "mcp")
    files = [*WORKFLOWS, *EXAMPLES, tmp_path / ".github" / "workflows" / "copeca.yml"]
    assert len(WORKFLOWS) >= 2 and len(EXAMPLES) >= 5
    result = run([tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows",
                  *map(str, files)])
    assert result.returncode == 0, result.stdout + result.stderr


def test_zizmor_finds_nothing_in_workflows_action_and_examples(tmp_path: Path) -> None:
    zizmor = tool("zizmor")
    result = run([zizmor, "--offline", "--no-progress", str(ACTION), *map(str, WORKFLOWS)])
    assert result.returncode == 0, result.stdout + result.stderr
    scaffold(tmp_path, "hook")
    generated = tmp_path / ".github" / "workflows" / "copeca.yml"
    result = run([zizmor, "--offline", "--no-progress", "--config", str(EXAMPLE_ZIZMOR),
                  *map(str, EXAMPLES), str(generated)])
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_is_clean() -> None:
    result = run([tool("hadolint"), str(DOCKERFILE)])
    assert result.returncode == 0, result.stdout + result.stderr


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_dockerfile_obeys_github_action_rules() -> None:
    instructions = dockerfile_instructions()
    names = [name for name, _ in instructions]
    assert "USER" not in names and "WORKDIR" not in names  # GitHub forbids both for actions
    entry = [args for name, args in instructions if name == "ENTRYPOINT"]
    assert len(entry) == 1 and isinstance(json.loads(entry[0]), list)  # exec form
    args = {a.split("=")[0] for n, a in instructions if n == "ARG"}
    assert {"BASE_IMAGE", "FETCH_SNAPSHOTS"} <= args
    base = next(a for n, a in instructions if n == "ARG" and a.startswith("BASE_IMAGE="))
    assert re.match(r"BASE_IMAGE=[\w./-]+:[\w.-]+$", base) and ":latest" not in base
    assert "--mount=type=secret,id=extra_ca" in DOCKERFILE.read_text()
    assert "npm ci" in DOCKERFILE.read_text()


def test_every_input_is_read_and_mapped_to_its_underscore_env_name() -> None:
    data = action()
    inputs = set(data["inputs"])
    assert inputs == set(PARSERS)
    run_step = next(s for s in data["runs"]["steps"] if s.get("id") == "run")
    expected = {f"INPUT_{name.upper().replace('-', '_')}": f"${{{{ inputs.{name} }}}}"
                for name in inputs}
    mapped = {k: v for k, v in run_step["env"].items() if k.startswith("INPUT_")}
    assert mapped == expected
    for name, spec in data["inputs"].items():
        assert spec.get("description"), name
        assert "default" in spec or spec.get("required"), name


def test_outputs_are_those_of_the_design() -> None:
    outputs = action()["outputs"]
    assert tuple(outputs) == OUTPUT_NAMES
    for name, spec in outputs.items():
        assert spec["value"] == f"${{{{ steps.run.outputs.{name} }}}}"


def test_composite_fails_off_linux_and_pins_upload_artifact() -> None:
    steps = action()["runs"]["steps"]
    assert action()["runs"]["using"] == "composite"
    assert steps[0]["if"] == "runner.os != 'Linux'" and "exit 1" in steps[0]["run"]
    uses = [s["uses"] for s in steps if "uses" in s]
    assert uses and all(SHA_PIN.match(u) for u in uses)
    assert any(u.startswith("actions/upload-artifact@") for u in uses)


def test_runner_image_build_and_default() -> None:
    step = next(s for s in action()["runs"]["steps"] if s.get("id") == "image")
    script = step["run"]
    assert 'ghcr.io/${ACTION_REPOSITORY,,}:${ACTION_REF}' in script
    assert 'docker build --tag "${image}" "${ACTION_PATH}"' in script


def test_resolve_image_script_runs(tmp_path: Path) -> None:
    """The image step's bash, run for real with a stub `docker`."""
    step = next(s for s in action()["runs"]["steps"] if s.get("id") == "image")
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "docker").write_text(f"#!/bin/sh\necho \"$@\" > {tmp_path}/docker-args\n")
    (stub / "docker").chmod(0o755)
    cases = {("", "Owner/Copeca-Action", "v1"): "ghcr.io/owner/copeca-action:v1",
             ("", "", ""): "copeca-action:local-7",
             ("build", "o/r", "v1"): "copeca-action:local-7",
             ("my/image:1", "o/r", "v1"): "my/image:1"}
    for (image, repo, ref), expected in cases.items():
        out = tmp_path / "out"
        out.write_text("")
        env = {"PATH": f"{stub}:/usr/bin:/bin", "RUNNER_IMAGE": image,
               "ACTION_REPOSITORY": repo, "ACTION_REF": ref, "ACTION_PATH": str(ROOT),
               "GITHUB_OUTPUT": str(out), "GITHUB_RUN_ID": "7"}
        result = subprocess.run(["bash", "-c", step["run"]], env=env, capture_output=True,
                                text=True, check=False)
        assert result.returncode == 0, result.stderr
        assert out.read_text() == f"image={expected}\n"


@pytest.mark.parametrize("kind", KINDS)
def test_init_scaffold_validates(tmp_path: Path, kind: str) -> None:
    from copeca_action import __version__
    from copeca_action.github._scaffold import MIN_CONTROLS, MIN_RUNS
    from copeca_action.scenario import load_scenario, validate_paths

    written = scaffold(tmp_path, kind, name="acme")
    result = validate_paths([tmp_path / "benchmark"])
    assert result.ok, [str(p) for p in result.errors]
    assert not result.warnings
    bench = tmp_path / "benchmark"
    tasks = [yaml.safe_load(p.read_text()) for p in (bench / "tasks").rglob("*.yaml")]
    controls = [t for t in tasks if t.get("control")]
    assert len(controls) >= MIN_CONTROLS
    scenario = load_scenario(bench / "scenarios" / "pr.yaml")
    per_arm = (len(tasks) - len(controls)) * scenario.repetitions
    assert per_arm >= scenario.thresholds.min_runs == MIN_RUNS
    mode = yaml.safe_load((bench / "modes" / "acme.yaml").read_text())
    assert "{tool_dir}" in json.dumps(mode)
    assert "--" not in (mode.get("wrapper") or [])
    workflow = yaml.safe_load((tmp_path / ".github" / "workflows" / "copeca.yml").read_text())
    step = workflow["jobs"]["benchmark"]["steps"][-1]
    assert step["uses"] == f"copeca-action/copeca-action@v{__version__}"  # a version that exists
    assert step["with"]["scenario"] == "benchmark/scenarios/pr.yaml"
    assert workflow["jobs"]["benchmark"]["permissions"]["pull-requests"] == "write"
    assert "github.workflow" in workflow["concurrency"]["group"]
    assert (bench / "scripts" / "acme.yaml").is_file()
    stubs = [p for p in written if "tool-stub" in p.parts]
    assert stubs or kind == "env"
    for stub in stubs:
        if stub.suffix != ".py":
            assert stub.stat().st_mode & 0o111, stub  # executable


def test_the_wrapper_stub_runs_the_agent_command(tmp_path: Path) -> None:
    scaffold(tmp_path, "wrapper", name="acme")
    stub = tmp_path / "benchmark" / "tool-stub" / "acme-wrapper"
    work = tmp_path / "wt"
    work.mkdir()
    done = subprocess.run([str(stub), "sh", "-c", "echo agent ran with $#", "x", "a", "b"],
                          cwd=work, capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout == "agent ran with 2\n"
    assert (work / ".acme-used").is_file()


def test_init_never_overwrites(tmp_path: Path) -> None:
    from copeca_action.errors import ConfigError

    scaffold(tmp_path, "env")
    with pytest.raises(ConfigError, match="already exists"):
        scaffold(tmp_path, "env")
    with pytest.raises(ConfigError, match="--kind"):
        scaffold(tmp_path / "x", "plugin")


def test_run_step_passes_variables_by_name_and_runner_files_through_the_workspace(
        tmp_path: Path) -> None:
    """The run step's bash, for real, with a stub `docker` that records its argv, writes an
    output and a summary where the container would, and fails: the step copies both back,
    fails with the container's exit code and leaves nothing in the workspace."""
    step = next(s for s in action()["runs"]["steps"] if s.get("id") == "run")
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "docker").write_text(f"""#!/bin/bash
[ "$1" = run ] || exit 0
printf '%s\\n' "$@" > {tmp_path}/argv
env > {tmp_path}/env
io="$(ls -d {tmp_path}/ws/.copeca-io.*)"
cp "$io/event.json" {tmp_path}/event-seen.json
echo "verdict=regression" >> "$io/output"
echo "## summary" >> "$io/summary.md"
echo cid-1 > "$io/cid"
exit 3
""")
    (stub / "docker").chmod(0o755)
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "event.json").write_text('{"action": "opened"}')
    (tmp_path / "output").write_text("earlier=1\n")
    env = {"PATH": f"{stub}:/usr/bin:/bin", "GITHUB_WORKSPACE": str(ws),
           "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
           "GITHUB_OUTPUT": str(tmp_path / "output"),
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "COPECA_IMAGE": "img:1",
           "INPUT_SCENARIO": "s.yaml", "INPUT_MERGE": "a.copeca\nINPUT_EVIL=1\nb.copeca",
           "INPUT_ANTHROPIC_API_KEY": "sk-secret"}
    result = subprocess.run(["bash", "-c", step["run"]], env=env, capture_output=True,
                            text=True, check=False)
    assert result.returncode == 3, result.stderr  # the container's failure is the step's
    argv = (tmp_path / "argv").read_text().splitlines()
    assert argv[-1] == "img:1" and "--rm" not in argv and "--cidfile" in argv
    assert f"{ws}:/github/workspace" in argv
    assert f"COPECA_HOST_WORKSPACE={ws}" in argv
    inner = {a.split("=", 1)[0]: a.split("=", 1)[1] for a in argv
             if a.startswith(("GITHUB_EVENT_PATH=", "GITHUB_OUTPUT=", "GITHUB_STEP_SUMMARY="))}
    assert all(v.startswith("/github/workspace/.copeca-io.") for v in inner.values())
    assert len(inner) == 3
    assert (tmp_path / "event-seen.json").read_text() == '{"action": "opened"}'
    assert (tmp_path / "output").read_text() == "earlier=1\nverdict=regression\n"
    assert (tmp_path / "summary.md").read_text() == "## summary\n"
    assert list(ws.iterdir()) == []  # the exchange folder is removed
    passed = {argv[i + 1] for i, a in enumerate(argv) if a == "--env"}
    assert {"INPUT_SCENARIO", "INPUT_MERGE", "INPUT_ANTHROPIC_API_KEY"} <= passed
    assert "INPUT_EVIL" not in passed  # a value's line is not a variable
    assert not any("sk-secret" in a for a in argv)  # values never on the command line
