from __future__ import annotations

from pathlib import Path

import pytest

from copeca_action.cli import main
from copeca_action.scenario import (
    Task,
    contamination_of,
    lint_prompt,
    load_corpus,
    validate_paths,
)


def make_task(prompt: str, repo: str = "fastapi", **source: str) -> Task:
    return Task.model_validate({
        "id": "x/y", "repo": repo, "type": "comprehension", "category": "locate",
        "language": "python", "prompt": prompt,
        "source": {"origin": "original", **source},
        "grading": {"answer": {"required": ["z"]}}})


def test_bundled_corpus_is_valid(corpus_root: Path) -> None:
    result = validate_paths([corpus_root])
    assert result.ok, [str(e) for e in result.errors]
    corpus = load_corpus(corpus_root)
    assert result.tasks == len(corpus.tasks) >= 6
    assert {"claude", "codex"} <= set(corpus.runners)


def test_validate_without_paths_checks_the_bundled_corpus(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "-q"]) == 0
    assert capsys.readouterr().out.startswith("ok: ")


@pytest.mark.parametrize("prompt", [
    "Grep the code for the router.",
    "Where is X? Use the search tool.",
    "Run sed -n on routing.py and tell me what you see.",
    "Query the code-search server for the router.",
    "Which tool calls would reveal the router?",
    "Through the Model Context Protocol, find the router.",
])
def test_prompts_naming_tools_or_methods_are_flagged(prompt: str) -> None:
    assert lint_prompt(make_task(prompt))


@pytest.mark.parametrize("prompt", [
    "Which function builds the default operation id of a route?",
    "What does the router do when two routes share a path? Name the function involved.",
    "Find the cause of the failing dependency override and fix it.",
])
def test_prompts_that_name_information_pass(prompt: str) -> None:
    assert lint_prompt(make_task(prompt)) == []


def test_repository_name_is_exempt_but_methods_are_not() -> None:
    assert lint_prompt(make_task("In ripgrep, which flag enables PCRE2?", repo="ripgrep")) == []
    assert lint_prompt(make_task("Use ripgrep to find the PCRE2 flag.", repo="ripgrep"))


def test_lint_allow_exempts_a_named_term() -> None:
    task = make_task("Explain what the grep-like matcher module returns.")
    assert lint_prompt(task)
    allowed = task.model_copy(update={"lint_allow": ["grep"]})
    assert lint_prompt(allowed) == []


@pytest.mark.parametrize(("source", "expected"), [
    ({"origin": "SWE-bench Verified"}, "SWE-bench Verified"),
    ({"origin": "swebench"}, "SWE-bench"),
    ({"origin": "adapted", "reference": "princeton-nlp/SWE-bench_Lite#12"}, "SWE-bench"),
    ({"origin": "adapted", "note": "inspired by Human-Eval #3"}, "HumanEval"),
    ({"origin": "MBPP"}, "MBPP"),
    ({"origin": "class-eval"}, "ClassEval"),
    ({"origin": "original", "note": "written from reading routing.py"}, None),
])
def test_contamination_list(source: dict[str, str], expected: str | None) -> None:
    assert contamination_of(make_task("Which function builds the id?", **source)) == expected


def test_symbolic_links_to_a_parent_folder_are_walked_once(tmp_path: Path,
                                                          corpus_root: Path) -> None:
    # Two links to a parent made the walk exponential: `validate` never ended.
    root = tmp_path / "corpus"
    (root / "tasks").mkdir(parents=True)
    (root / "repos.yaml").write_bytes((corpus_root / "repos.yaml").read_bytes())
    task = corpus_root / "tasks" / "fastapi" / "locate-unique-id.yaml"
    (root / "tasks" / "locate-unique-id.yaml").write_bytes(task.read_bytes())
    for name in ("a", "b", "c"):
        (root / "tasks" / name).symlink_to("..", target_is_directory=True)
    result = validate_paths([root])
    assert result.ok, [str(e) for e in result.errors]
    assert result.tasks == 1
    corpus = load_corpus(root)
    assert not corpus.problems and list(corpus.tasks) == ["fastapi/locate-unique-id"]


def test_validate_warns_when_an_arm_cannot_reach_min_runs(tmp_path: Path,
                                                         corpus_root: Path) -> None:
    scenario = tmp_path / "one.yaml"
    scenario.write_text("name: one\ntasks: {include: [fastapi/locate-unique-id]}\n"
                        "modes: [baseline, codesearch]\nmodels: [gpt-5]\n"
                        "model_runner_map: {gpt-5: codex}\n")
    result = validate_paths([scenario], corpus_root=corpus_root)
    assert result.ok
    shown = [str(w) for w in result.warnings]
    assert any("thresholds.min_runs: arm 'baseline' has at most 3 run(s)" in w
               for w in shown), shown


def test_two_modes_of_one_name_are_refused_where_a_run_loads_them(tmp_path: Path,
                                                                 corpus_root: Path) -> None:
    # plan and run used whichever file sorted last (validate only said the file name differs).
    root = tmp_path / "corpus"
    (root / "modes").mkdir(parents=True)
    (root / "repos.yaml").write_bytes((corpus_root / "repos.yaml").read_bytes())
    for name in ("baseline", "codesearch"):
        (root / "modes" / f"{name}.yaml").write_bytes(
            (corpus_root / "modes" / f"{name}.yaml").read_bytes())
    (root / "modes" / "codesearch2.yaml").write_text("name: codesearch\nenv: {X: '1'}\n")
    corpus = load_corpus(root)
    shown = [str(p) for p in corpus.problems]
    assert any("codesearch2.yaml:1: name: duplicate mode name 'codesearch'" in p
               and "codesearch.yaml" in p for p in shown), shown
    assert corpus.modes["codesearch"].mcp_config is not None  # the first one, not the copy


def test_a_placeholder_typo_in_a_mode_is_refused_by_validate_and_plan(
        tmp_path: Path, corpus_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`{tool_dri}` would reach the tool as written on every tool-arm run, after the
    baseline's runs were paid; validate only warned and plan and run went ahead. A near
    miss of a placeholder is now an error wherever modes load; another `{name}` (a tool's
    own template) stays a warning, and a shell's `${HOME}` and the placeholders the
    harness fills are left alone."""
    modes = tmp_path / "modes"
    modes.mkdir()
    (modes / "typo.yaml").write_text(
        "name: typo\nmcp_config:\n  mcpServers:\n    t:\n      command: \"{python}\"\n"
        "      args: [\"{tool_dri}/server.py\", \"${HOME}/x\", \"{demo_tool}\"]\n"
        "env:\n  T: \"{Tool_Dir}/bin\"\n")
    assert main(["validate", str(modes / "typo.yaml")]) == 1
    err = capsys.readouterr().err
    assert ("typo.yaml:6: mcp_config.mcpServers.t.args[0]: {tool_dri} is no placeholder the "
            "harness fills: did you mean {tool_dir}?") in err
    assert "typo.yaml:8: env.T: {Tool_Dir} is no placeholder" in err
    assert err.count("is no placeholder") == 2
    (modes / "own.yaml").write_text("name: own\nenv:\n  T: \"{query}\"\n")
    assert main(["validate", str(modes / "own.yaml")]) == 0
    assert "own.yaml:3: env.T: {query} is no placeholder" in capsys.readouterr().err
    root = tmp_path / "bench"
    _small_corpus(root, corpus_root)
    (root / "modes" / "codesearch.yaml").write_text(
        (corpus_root / "modes" / "codesearch.yaml").read_text().replace("{demo_tool}",
                                                                        "{demo_tol}"))
    (root / "scenarios").mkdir()
    (root / "scenarios" / "s.yaml").write_text(
        "name: s\ntasks: {include: ['fastapi/*']}\nmodes: [baseline, codesearch]\n"
        "models: [claude-sonnet-4-5]\nmodel_runner_map: {claude-sonnet-4-5: claude}\n")
    assert main(["plan", str(root / "scenarios" / "s.yaml")]) == 2
    err = capsys.readouterr().err
    assert "codesearch.yaml:11: mcp_config.mcpServers.codesearch.args[0]: {demo_tol}" in err
    assert "did you mean {demo_tool}?" in err and "Traceback" not in err

def _small_corpus(root: Path, corpus_root: Path) -> None:
    (root / "modes").mkdir(parents=True)
    (root / "repos.yaml").write_bytes((corpus_root / "repos.yaml").read_bytes())
    for name in ("baseline", "codesearch"):
        (root / "modes" / f"{name}.yaml").write_bytes(
            (corpus_root / "modes" / f"{name}.yaml").read_bytes())
    task = root / "tasks" / "fastapi" / "locate-unique-id.yaml"
    task.parent.mkdir(parents=True)
    task.write_bytes((corpus_root / "tasks" / "fastapi" / "locate-unique-id.yaml").read_bytes())


def test_scripts_leading_out_of_the_benchmark_are_refused(tmp_path: Path,
                                                           corpus_root: Path) -> None:
    """`scripts:` that led anywhere on the machine (`/tmp/x`, `../../x`, a link) was played
    as the benchmark's scripts; now it must stay in the corpus or beside the scenario."""
    root = tmp_path / "bench"
    _small_corpus(root, corpus_root)
    (root / "scripts").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (root / "linked").symlink_to(tmp_path / "elsewhere")
    (root / "scenarios").mkdir()
    head = ("name: s\ntasks: {include: ['fastapi/*']}\nmodes: [baseline, codesearch]\n"
            "models: [claude-sonnet-4-5]\nmodel_runner_map: {claude-sonnet-4-5: claude}\n"
            "model_endpoint: scripted\n")
    for rel, ok in (("../scripts", True), (str(root / "scripts"), True),
                    ("../../elsewhere", False), (str(tmp_path / "elsewhere"), False),
                    ("../linked", False)):
        scenario = root / "scenarios" / "s.yaml"
        scenario.write_text(head + f"scripts: {rel}\n")
        result = validate_paths([scenario])
        shown = [str(p) for p in result.errors]
        assert result.ok is ok, (rel, shown)
        if not ok:
            assert shown == [f"{scenario}:7: scripts: {rel} leads out of the corpus ({root}) "
                             f"to {(tmp_path / 'elsewhere').resolve()}: the benchmark's files "
                             "stay inside it"]


def test_a_dockerfile_must_be_a_file_in_the_corpus(tmp_path: Path) -> None:
    """Its folder is the build context sent to the engine: a link to /etc sent /etc."""
    root = tmp_path / "bench"
    root.mkdir()
    (tmp_path / "Dockerfile").write_text("FROM scratch\n")
    (root / "linked").symlink_to(tmp_path / "Dockerfile")
    (root / "Dockerfile").write_text("FROM scratch\n")
    for rel, error in (("Dockerfile", None), ("linked", "leads out of the corpus"),
                       ("nope/Dockerfile", "file not found")):
        (root / "repos.yaml").write_text("repos:\n  mine:\n    language: python\n"
                                         f"    local: {{path: mine}}\n    dockerfile: {rel}\n")
        shown = [str(p) for p in validate_paths([root / "repos.yaml"]).errors]
        if error is None:
            assert shown == []
        else:
            assert len(shown) == 1 and shown[0].startswith(
                f"{root / 'repos.yaml'}:5: repos.mine.dockerfile: ") and error in shown[0]
