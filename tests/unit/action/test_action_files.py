"""action.yml, the Dockerfile, the workflows and the examples: linted and cross-checked."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import typing
from pathlib import Path

import pytest
import yaml

from copeca_action.github import OUTPUT_NAMES, PARSERS, ActionInputs, read_inputs
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
    files = [*WORKFLOWS, *EXAMPLES, tmp_path / ".github" / "workflows" / "copeca.yml",
             tmp_path / ".github" / "workflows" / "copeca-approve.yml"]
    assert len(WORKFLOWS) >= 2 and len(EXAMPLES) >= 5
    result = run([tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows",
                  *map(str, files)])
    assert result.returncode == 0, result.stdout + result.stderr


def test_zizmor_finds_nothing_in_workflows_action_and_examples(tmp_path: Path) -> None:
    zizmor = tool("zizmor")
    result = run([zizmor, "--offline", "--no-progress", str(ACTION), *map(str, WORKFLOWS)])
    assert result.returncode == 0, result.stdout + result.stderr
    scaffold(tmp_path, "hook")
    generated = sorted((tmp_path / ".github" / "workflows").glob("*.yml"))
    assert len(generated) == 2
    result = run([zizmor, "--offline", "--no-progress", "--config", str(EXAMPLE_ZIZMOR),
                  *map(str, EXAMPLES), *map(str, generated)])
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


def _choices(name: str) -> tuple[str, ...]:
    """The values a choice input takes (its field's Literal), () for any other input."""
    annotation = ActionInputs.model_fields[name.replace("-", "_")].annotation
    return tuple(getattr(annotation, "__args__", ())) if getattr(
        annotation, "__origin__", None) is typing.Literal else ()


def test_action_yml_defaults_are_the_parsers() -> None:
    """GitHub passes action.yml's default when a workflow leaves an input out; the parser's
    own default applies when the variable is absent (a test, `docker://`). Both must be the
    same value."""
    given: dict[str, str] = {}
    for name, spec in action()["inputs"].items():
        default = str(spec["default"])
        if default.startswith("${{"):  # an expression GitHub evaluates (github-token)
            assert name == "github-token"
            continue
        given[f"INPUT_{name.upper().replace('-', '_')}"] = default
    parsed = read_inputs({**given, "INPUT_SCENARIO": "s.yaml"})
    assert parsed == ActionInputs(scenario="s.yaml")


def test_the_docs_input_table_is_action_yml() -> None:
    """docs/action.md lists every input once, with action.yml's default and every choice."""
    rows = {}
    for line in (ROOT / "docs" / "action.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"`[a-z-]+`", cells[0]):
            name = cells[0].strip("`")
            if name in PARSERS:
                assert name not in rows, f"{name} is listed twice"
                rows[name] = cells
    spec = action()["inputs"]
    assert set(rows) == set(spec)
    for name, (_, default, meaning) in rows.items():
        written = str(spec[name]["default"])
        if written:
            assert default == f"`{written}`", name
        else:
            assert default in ("empty", "scenario's", "(required unless `merge`)"), name
        for choice in _choices(name):
            assert f"`{choice}`" in meaning, (name, choice)
            assert choice in spec[name]["description"], (name, choice)


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


def test_the_image_step_reads_the_lock_from_the_actions_own_folder() -> None:
    step = next(s for s in action()["runs"]["steps"] if s.get("id") == "image")
    assert step["env"]["ACTION_PATH"] == "${{ github.action_path }}"
    assert "action_repository" not in json.dumps(step) and "action_ref" not in json.dumps(step)
    assert step["run"] == 'bash "${ACTION_PATH}/image/resolve-image.sh"'
    assert "image.lock" in (ROOT / ".dockerignore").read_text().split()


RESOLVE = ROOT / "image" / "resolve-image.sh"


class Resolver:
    """image/resolve-image.sh run for real in a copy of a tiny action folder, with stub
    `docker` and `gh` that record their arguments (and fail when told to)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.action = tmp / "nested" / "copeca-action"  # e.g. inside a user's composite
        (self.action / "image").mkdir(parents=True)
        for name in ("resolve-image.sh", "context-digest.sh"):
            shutil.copy2(ROOT / "image" / name, self.action / "image" / name)
        (self.action / "Dockerfile").write_text("FROM scratch\n")
        (self.action / "entrypoint.py").write_text("print('x')\n")
        self.bin = tmp / "bin"
        self.bin.mkdir()
        self.log = tmp / "calls"
        for name in ("docker", "gh"):
            self.stub(name, 0)

    def stub(self, name: str, code: int) -> None:
        (self.bin / name).write_text(f"#!/bin/sh\necho \"{name} $*\" >> {self.log}\n"
                                     f"echo {name}-said-no >&2\nexit {code}\n")
        (self.bin / name).chmod(0o755)

    def context(self) -> str:
        done = subprocess.run([str(self.action / "image" / "context-digest.sh"),
                               str(self.action)], capture_output=True, text=True, check=True)
        return done.stdout.strip()

    def lock(self, context: str | None = None, arches: tuple[str, ...] = ("amd64", "arm64"),
             ) -> None:
        lines = ["# written by .github/workflows/release.yml", "version 0.1.0",
                 "repository copeca-action/copeca-action",
                 "image ghcr.io/copeca-action/copeca-action",
                 f"context {context or self.context()}"]
        lines += [f"{a} sha256:{a[-2:] * 32}" for a in arches]
        (self.action / "image.lock").write_text("\n".join(lines) + "\n")

    def run(self, runner_image: str = "", gh: bool = True,
            outer_repo: str = "someone/their-composite") -> tuple[int, str, str, str]:
        out = self.tmp / "out"
        out.write_text("")
        self.log.write_text("")
        path = f"{self.bin}:/usr/bin:/bin"
        if not gh:
            (self.bin / "gh").unlink(missing_ok=True)
        env = {"PATH": path, "RUNNER_IMAGE": runner_image, "ACTION_PATH": str(self.action),
               "GITHUB_OUTPUT": str(out), "GITHUB_RUN_ID": "7", "RUNNER_TEMP": str(self.tmp),
               # what GitHub sets for a nested action: the outer action's name and ref
               "GITHUB_ACTION_REPOSITORY": outer_repo, "GITHUB_ACTION_REF": "main"}
        done = subprocess.run(["bash", str(self.action / "image" / "resolve-image.sh")],
                              env=env, capture_output=True, text=True, check=False)
        return done.returncode, out.read_text(), self.log.read_text(), done.stdout + done.stderr


def _arch() -> str:
    import platform

    return {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())


def test_a_release_pulls_by_digest_from_the_lock_and_verifies_provenance(
        tmp_path: Path) -> None:
    """Composite in composite: the action sits in a folder of another action and GitHub
    names the outer one; the lock in the action's own folder decides."""
    r = Resolver(tmp_path)
    r.lock()
    code, out, calls, log = r.run()
    ref = f"ghcr.io/copeca-action/copeca-action@sha256:{_arch()[-2:] * 32}"
    assert code == 0, log
    assert out == f"image={ref}\n"
    assert calls.splitlines() == [
        f"docker pull {ref}",
        f"gh attestation verify oci://{ref} --repo copeca-action/copeca-action"]
    assert "provenance of sha256:" in log and "their-composite" not in calls


def test_without_gh_the_pull_by_digest_says_provenance_was_not_verified(tmp_path: Path) -> None:
    r = Resolver(tmp_path)
    r.lock()
    code, out, _calls, log = r.run(gh=False)
    assert code == 0 and out.startswith("image=ghcr.io/copeca-action/copeca-action@sha256:")
    assert "provenance was not verified" in log


def test_a_provenance_that_does_not_verify_stops(tmp_path: Path) -> None:
    r = Resolver(tmp_path)
    r.lock()
    r.stub("gh", 1)
    code, out, _, log = r.run()
    assert code == 1 and out == ""
    assert "does not verify" in log and "gh-said-no" in log


def test_a_failed_pull_says_what_to_do(tmp_path: Path) -> None:
    r = Resolver(tmp_path)
    r.lock()
    r.stub("docker", 1)
    code, out, _, log = r.run()
    assert code == 1 and out == ""
    assert "docker-said-no" in log  # docker's own words, then what to do
    assert "make it public" in log and "runner-image: build" in log


@pytest.mark.parametrize(("change", "why"), [
    ("fork", "are not those of release 0.1.0"),
    ("arch", "has no image for"),
    ("nolock", "no image.lock"),
])
def test_other_code_or_no_digest_builds_the_dockerfile_with_a_notice(
        tmp_path: Path, change: str, why: str) -> None:
    r = Resolver(tmp_path)
    if change == "fork":
        r.lock()
        (r.action / "entrypoint.py").write_text("print('a fork changed this')\n")
    elif change == "arch":
        r.lock(arches=("riscv64",))
    code, out, calls, log = r.run()
    assert code == 0, log
    assert out == "image=copeca-action:local-7\n"
    assert calls.splitlines() == [f"docker build --tag copeca-action:local-7 {r.action}"]
    assert why in log and "::notice" in log


def test_runner_image_overrides_the_lock(tmp_path: Path) -> None:
    r = Resolver(tmp_path)
    r.lock()
    assert r.run("my/image:1")[:3] == (0, "image=my/image:1\n", "")
    _code, out, calls, _ = r.run("build")
    assert out == "image=copeca-action:local-7\n" and calls.startswith("docker build")


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
    said = (bench / "scenarios" / "pr.yaml").read_text()  # the comment counts what runs
    assert (f"= {per_arm} runs per arm, besides the\n# controls' "
            f"{len(controls) * scenario.repetitions} " in said)
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


def test_run_step_copies_back_only_plain_files(tmp_path: Path) -> None:
    """The exchange folder lies in the workspace, which the tool under test can write: a
    `summary.md` replaced by a link to /proc/self/environ had the step's `cat` publish its
    own environment (the secret inputs) in the job summary, and an `output` replaced by a
    FIFO hung the job. Neither is copied now; the step fails saying which."""
    step = next(s for s in action()["runs"]["steps"] if s.get("id") == "run")
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "docker").write_text(f"""#!/bin/bash
[ "$1" = run ] || exit 0
io="$(ls -d {tmp_path}/ws/.copeca-io.*)"
ln -sf /proc/self/environ "$io/summary.md"
rm "$io/output" && mkfifo "$io/output"
""")
    (stub / "docker").chmod(0o755)
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "event.json").write_text("{}")
    env = {"PATH": f"{stub}:/usr/bin:/bin", "GITHUB_WORKSPACE": str(ws),
           "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
           "GITHUB_OUTPUT": str(tmp_path / "output"),
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "COPECA_IMAGE": "img:1",
           "INPUT_SCENARIO": "s.yaml", "INPUT_ANTHROPIC_API_KEY": "sk-secret"}
    result = subprocess.run(["bash", "-c", step["run"]], env=env, capture_output=True,
                            text=True, check=False, timeout=60)
    assert result.returncode == 2
    assert "::error title=copeca-action::output is not a plain file" in result.stdout
    assert "::error title=copeca-action::summary.md is not a plain file" in result.stdout
    for name in ("output", "summary.md"):
        assert not (tmp_path / name).exists() or "sk-secret" not in (
            tmp_path / name).read_text(errors="replace")
    assert list(ws.iterdir()) == []


def test_run_step_passes_the_names_of_every_given_input_but_no_value(tmp_path: Path) -> None:
    """A composite action gets no `INPUT_*` variable for a `with:` key it does not declare
    (GitHub only warns), so a typo such as `budget_usd` was dropped without a word; the step
    now hands the container the names of `toJSON(inputs)` (as GitHub indents it), and never
    that JSON, which holds the secrets."""
    step = next(s for s in action()["runs"]["steps"] if s.get("id") == "run")
    assert step["env"]["COPECA_INPUTS_JSON"] == "${{ toJSON(inputs) }}"
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "docker").write_text(f"""#!/bin/bash
[ "$1" = run ] || exit 0
printf '%s\\n' "$@" > {tmp_path}/argv
printf '%s' "$COPECA_GIVEN_INPUTS" > {tmp_path}/given
""")
    (stub / "docker").chmod(0o755)
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "event.json").write_text("{}")
    inputs = {"scenario": "s.yaml", "budget_usd": "5",
              "anthropic-api-key": 'sk-secret\n  "evil": "x"', "Fail-On": "never"}
    env = {"PATH": f"{stub}:/usr/bin:/bin", "GITHUB_WORKSPACE": str(ws),
           "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
           "GITHUB_OUTPUT": str(tmp_path / "output"),
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "COPECA_IMAGE": "img:1",
           "COPECA_INPUTS_JSON": json.dumps(inputs, indent=2)}
    result = subprocess.run(["bash", "-c", step["run"]], env=env, capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "given").read_text().splitlines() == list(inputs)
    argv = (tmp_path / "argv").read_text().splitlines()
    passed = {argv[i + 1] for i, a in enumerate(argv) if a == "--env"}
    assert "COPECA_GIVEN_INPUTS" in passed and "COPECA_INPUTS_JSON" not in passed
    assert not any("sk-secret" in a for a in argv)


def test_the_release_workflow_writes_a_lock_the_action_pulls_by(tmp_path: Path) -> None:
    """release.yml's lock step, run for real in a git checkout of a tiny action (a bare
    `origin` receives the tags): the lock it commits is one resolve-image.sh accepts for
    exactly that checkout, and the major and minor tags move to the release commit."""
    release = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    step = next(s for s in release["jobs"]["lock"]["steps"]
                if s.get("name", "").startswith("Write image.lock"))
    r = Resolver(tmp_path)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@x"]
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "v0.1.0"],
                 ["remote", "add", "origin", str(origin)], ["tag", "v0"]):
        subprocess.run([*git, *args], cwd=r.action, check=True, capture_output=True)
    digests = tmp_path / "digests"
    digests.mkdir()
    (digests / "amd64").write_text("sha256:" + "a" * 64 + "\n")
    (digests / "arm64").write_text("sha256:" + "b" * 64 + "\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "IMAGE": "ghcr.io/o/copeca-action",
           "VERSION": "0.1.0", "DIGESTS": str(digests), "GITHUB_REPOSITORY": "o/copeca-action"}
    done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=r.action, env=env,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    lock = (r.action / "image.lock").read_text()
    assert "version 0.1.0" in lock and f"context {r.context()}" in lock
    tags = subprocess.run(["git", "ls-remote", "--tags", str(origin)], capture_output=True,
                          text=True, check=True).stdout
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=r.action, capture_output=True,
                          text=True, check=True).stdout.strip()
    assert {f"{head}\trefs/tags/{t}" for t in ("v0.1.0", "v0.1", "v0")} <= set(tags.splitlines())
    code, out, calls, log = r.run()
    digest = {"amd64": "a" * 64, "arm64": "b" * 64}.get(_arch())
    if digest is None:
        pytest.skip(f"no release digest for this machine's architecture {_arch()}")
    assert code == 0, log
    assert out == f"image=ghcr.io/o/copeca-action@sha256:{digest}\n"
    assert calls.splitlines()[0] == f"docker pull ghcr.io/o/copeca-action@sha256:{digest}"
