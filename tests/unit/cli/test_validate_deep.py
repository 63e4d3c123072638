"""`validate --deep`: real check-task runs on a toy repository; missing parts are skips."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from copeca_action._cli._deep import deep_check, expand_command
from copeca_action.cli import main
from copeca_action.scenario import load_corpus


def _task(id_: str, language: str, search: str, replace: str,
          command: list[str]) -> dict[str, object]:
    return {"id": id_, "repo": "toy", "type": "edit", "category": "fix", "language": language,
            "prompt": "Adding two numbers gives the wrong result. Fix it.",
            "source": {"origin": "original"},
            "grading": {"test": {"mutations": [{"file": "calc.py", "search": search,
                                                "replace": replace}],
                                 "command": command, "timeout_s": 60}}}


def _setup(tmp_path: Path, tasks: list[dict[str, object]]) -> tuple[Path, Path]:
    corpus = tmp_path / "corpus"
    (corpus / "tasks" / "toy").mkdir(parents=True)
    (corpus / "repos.yaml").write_text(yaml.safe_dump(
        {"repos": {"toy": {"language": "python", "local": {"path": "toy"}}}}))
    for t in tasks:
        name = str(t["id"]).split("/")[1]
        (corpus / "tasks" / "toy" / f"{name}.yaml").write_text(yaml.safe_dump(t))
    repos = tmp_path / "repos"
    toy = repos / "toy"
    toy.mkdir(parents=True)
    (toy / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=toy, check=True)
    subprocess.run([*git, "add", "."], cwd=toy, check=True)
    subprocess.run([*git, "commit", "-qm", "toy"], cwd=toy, check=True)
    return corpus, repos


CHECK = ["{python}", "-c", "import calc; assert calc.add(2, 2) == 4; "
         "print('# tests 1\\n# pass 1\\n# fail 0')"]
"""A pass needs a test report besides exit 0: node's TAP counts are the shortest."""


def test_good_and_useless_mutations_and_skips(tmp_path: Path) -> None:
    corpus_dir, repos = _setup(tmp_path, [
        _task("toy/fix-good", "python", "a + b", "a - b", CHECK),
        # swaps the operands: the tests still pass on the mutated tree, so the task is useless
        _task("toy/fix-useless", "python", "a + b", "b + a", CHECK),
        _task("toy/fix-js", "javascript", "a + b", "a - b", ["node", "t.js"]),
    ])
    results = {r.task_id: r for r in deep_check(load_corpus(corpus_dir), repos)}
    assert results["toy/fix-good"].status == "ok"
    assert results["toy/fix-useless"].status == "fail"
    assert "mutated snapshot: expected fail, exit 0" in results["toy/fix-useless"].detail
    assert results["toy/fix-js"].status == "skip"
    assert "node" in results["toy/fix-js"].detail  # no node on PATH, or no node_modules


def test_missing_checkout_is_a_skip_and_the_cli_exit_code_follows_failures(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus_dir, repos = _setup(tmp_path, [_task("toy/fix-good", "python", "a + b", "a - b",
                                                CHECK)])
    assert main(["validate", str(corpus_dir), "--deep", "--repos-dir", str(repos)]) == 0
    assert "ok   toy/fix-good" in capsys.readouterr().out
    assert main(["validate", str(corpus_dir), "--deep", "--repos-dir",
                 str(tmp_path / "none")]) == 0
    out = capsys.readouterr().out
    assert "skip toy/fix-good: no checkout at" in out
    assert "deep: 0 checked ok, 0 failed, 1 skipped" in out


def test_python_placeholder_becomes_this_interpreter(tmp_path: Path) -> None:
    corpus_dir, _ = _setup(tmp_path, [_task("toy/fix-good", "python", "a + b", "a - b", CHECK)])
    task = load_corpus(corpus_dir).tasks["toy/fix-good"]
    test = expand_command(task).grading.test
    assert test is not None and test.command[0].endswith(("python", "python3", "python3.11"))


def test_deep_check_uses_the_shared_warm_build_cache(tmp_path: Path) -> None:
    """Both steps of every task see a private copy of one warm-up's cache, in the sandbox;
    what a step writes there never reaches the warm cache."""
    from copeca_action.workspace import read_warm_log

    counter = tmp_path / "warm-count"
    # passes only when the warm cache is visible (and writable), then vandalises its copy
    cmd = ["sh", "-c", 'test "$(cat "$TOY_CACHE/built")" = warm && echo x > "$TOY_CACHE/built" '
           '&& python3 -c "import calc; assert calc.add(2, 2) == 4" '
           "&& printf '# tests 1\\n# pass 1\\n# fail 0\\n'"]
    corpus_dir, repos = _setup(tmp_path, [
        _task("toy/fix-one", "python", "a + b", "a - b", cmd),
        _task("toy/fix-two", "python", "a + b", "a * 3", cmd)])
    spec = yaml.safe_load((corpus_dir / "repos.yaml").read_text())
    spec["repos"]["toy"]["build_cache"] = {
        "env": "TOY_CACHE", "toolchain": ["sh", "-c", "echo toy-1"],
        "warm": ["sh", "-c", f'echo run >> "{counter}"; echo warm > "$TOY_CACHE/built"']}
    (corpus_dir / "repos.yaml").write_text(yaml.safe_dump(spec))
    root = tmp_path / "build-cache"
    results = {r.task_id: r for r in deep_check(load_corpus(corpus_dir), repos,
                                                cache_root=root)}
    assert {r.status for r in results.values()} == {"ok"}, results
    assert counter.read_text().count("run") == 1
    assert [e["event"] for e in read_warm_log(root)] == ["start", "end"]
    (warm,) = [p for p in root.iterdir() if p.is_dir()]
    assert (warm / "built").read_text() == "warm\n"


def test_the_checkouts_stay_readable_inside_the_sandbox(tmp_path: Path) -> None:
    """The sandbox blanks /tmp; a checkout there (and express's node_modules beside its tree)
    must stay readable to the tests, so deep checks show the repos folder read-only."""
    from copeca_action._util.scrub import readable_dirs

    corpus_dir, repos = _setup(tmp_path, [_task("toy/fix-good", "python", "a + b", "a - b",
                                                CHECK)])
    assert main(["validate", str(corpus_dir), "--deep", "--repos-dir", str(repos)]) == 0
    assert repos.resolve() in readable_dirs()
