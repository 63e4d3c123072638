"""The engine grades edit tasks with private copies of a snapshot's warm build cache."""

from __future__ import annotations

from pathlib import Path

import yaml
from engine_helpers import config, fake, make_corpus, scenario

from copeca_action.engine import run_plan
from copeca_action.plan import build_plan
from copeca_action.records import read_records
from copeca_action.workspace import read_warm_log


def test_gradings_share_one_warm_up_and_cannot_poison_it(tmp_path: Path) -> None:
    counter = tmp_path / "warm-count"
    # the test command passes only when it sees the warm cache, then vandalises its copy
    test_cmd = ["sh", "-c", 'test "$(cat "$BUILD_CACHE/built")" = warm && '
                'echo poison > "$BUILD_CACHE/built" && touch "$BUILD_CACHE/planted" && '
                "printf '# tests 1\\n# pass 1\\n# fail 0\\n'"]
    mutation = {"file": "app.py", "search": "return 42", "replace": "return 42 "}
    corpus = make_corpus(tmp_path, {
        name: {"type": "edit", "category": "fix",
               "prompt": fake(edit=["app.py", "return 42 ", "return 42"], answer="done"),
               "grading": {"test": {"command": test_cmd, "mutations": [mutation]}}}
        for name in ("one", "two")})
    repos = yaml.safe_load((corpus / "repos.yaml").read_text())
    repos["repos"]["app"]["build_cache"] = {
        "env": "BUILD_CACHE", "toolchain": ["sh", "-c", "echo toolchain-1"],
        "warm": ["sh", "-c", f'echo run >> "{counter}"; echo warm > "$BUILD_CACHE/built"']}
    (corpus / "repos.yaml").write_text(yaml.safe_dump(repos))
    cfg = config(tmp_path, corpus, scenario(repetitions=2))
    run_plan(cfg, build_plan(cfg.scenario, cfg.corpus.tasks), scenario_text="name: t\n")
    records = read_records(cfg.out.results)
    assert len(records) == 4
    assert all(r.correct for r in records), [r.grading.get("output") for r in records]
    assert counter.read_text().count("run") == 1  # four gradings, one warm-up
    root = cfg.store.root / "build-cache"
    assert [e["event"] for e in read_warm_log(root)] == ["start", "end"]
    (warm,) = [p for p in root.iterdir() if p.is_dir()]
    assert (warm / "built").read_text() == "warm\n" and not (warm / "planted").exists()
    for r in records:
        assert r.grading["build_cache"]["warm"] == warm.name
        assert not (cfg.out.run_dir(r.run_id) / "grade-home" / "build-cache").exists()
