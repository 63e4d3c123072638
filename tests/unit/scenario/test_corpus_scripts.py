"""Every corpus task has a scripted baseline and tool arm that only its own prompt selects, so
the smoke scenario runs the whole corpus offline."""

from __future__ import annotations

from pathlib import Path

import yaml

from copeca_action.scenario import load_corpus, load_scenario


def _scripts(corpus_root: Path) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for path in sorted((corpus_root / "scripts").glob("*.yaml")):
        out.extend((yaml.safe_load(path.read_text()) or {}).get("scripts", []))
    return out


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_each_task_has_both_arms_matched_by_its_own_prompt_only(corpus_root: Path) -> None:
    tasks = load_corpus(corpus_root).tasks
    scripts = _scripts(corpus_root)
    ids = [str(s["id"]) for s in scripts]
    assert len(ids) == len(set(ids)), "duplicate script ids"
    by_id = {str(s["id"]): s for s in scripts}
    # the demo's tasks are scripted by hand in fastapi.yaml, under their own script ids
    demo = set(load_scenario(corpus_root / "scenarios" / "demo.yaml").tasks.include)
    for task in tasks.values():
        if task.id in demo:
            continue
        for arm in ("baseline", "codesearch"):
            script = by_id.get(f"{task.id}/{arm}")
            assert script is not None, f"{task.id}: no {arm} script"
            match = script["match"]
            assert isinstance(match, dict)
            needle = match["prompt_contains"]
            assert needle in task.prompt, task.id  # the prompt as the CLI sends it
            others = [o.id for o in tasks.values() if o.id != task.id and needle in o.prompt]
            assert not others, f"{task.id}: its script also matches {others}"
            assert (arm == "codesearch") == ("tool_prefix" in match), task.id


def test_scripted_answers_pass_their_own_grading(corpus_root: Path) -> None:
    """The scripted correct answer contains every required term and no forbidden one."""
    tasks = load_corpus(corpus_root).tasks
    for script in _scripts(corpus_root):
        task = tasks.get(str(script["id"]).rsplit("/", 1)[0])
        if task is None or task.grading.answer is None:
            continue
        steps = script["steps"]
        assert isinstance(steps, list)
        answer = _flat(str(steps[-1]["answer"])).lower()
        grading = task.grading.answer
        for entry in [*grading.required, *grading.all_of]:
            options = entry if isinstance(entry, list) else [entry]
            assert any(_flat(o).lower() in answer for o in options), (task.id, entry)
        for bad in grading.forbidden:
            assert _flat(bad).lower() not in answer, (task.id, bad)
