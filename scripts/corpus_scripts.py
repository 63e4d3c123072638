"""Write scripted-model scripts for the corpus tasks: corpus/scripts/<repo>-corpus.yaml.

Each task gets two arms, told apart as in the demo scripts: the tool arm matches when the CLI
offers the demo code-search MCP server (`tool_prefix: mcp__codesearch__`), the baseline
otherwise. Both share their first step. Comprehension answers are composed from the task's
own answer terms (so a correct run is graded correct) with the task's forbidden terms as the
seeded wrong answer; edit tasks undo the planted mutation with one edit. The output is data
that is reviewed and committed; rerun after adding tasks.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

from copeca_action.scenario import Task, load_corpus

ROOT = Path(__file__).resolve().parent.parent
# The demo's tasks, scripted by hand in corpus/scripts/fastapi.yaml.
DEMO_TASKS = {f"fastapi/{slug}" for slug in (
    "control-prompt-words", "control-python-strings", "control-status-families",
    "fix-no-content-body",
    "fix-unique-id-method", "locate-solve-dependencies", "locate-unique-id",
    "reason-endpoint-threadpool", "trace-http-exception-body", "trace-include-router-prefix")}


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: object) -> bool:
        return True


def _first(entry: str | list[str]) -> str:
    return entry[0] if isinstance(entry, list) else entry


def _terms(task: Task) -> list[str]:
    answer = task.grading.answer
    assert answer is not None
    return [_first(e) for e in [*answer.required, *answer.all_of]]


def marker(task: Task) -> str:
    """A phrase of the prompt, exactly as the CLI sends it, that no other task's prompt
    contains (checked by the caller): the first words of its first single-spaced stretch."""
    stretch = max(task.prompt.strip().split("\n")[0].split("  "), key=len)
    return " ".join(stretch.split(" ")[:9])


def _usage(inp: int, out: int, read: int = 0, write: int = 0) -> dict[str, int]:
    u = {"input": inp, "output": out}
    if read:
        u["cache_read"] = read
    if write:
        u["cache_write"] = write
    return u


def _focus(task: Task) -> tuple[str, str]:
    """(file to read, text to look up) for the task."""
    spans = task.gold_edit_lines or task.gold_context
    file = spans[0].file if spans else "."
    if task.grading.test is not None and task.grading.test.mutations:
        text = task.grading.test.mutations[0].replace
    else:
        text = " ".join(_terms(task))
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]{3,}", text)
    return file, max(words, key=len) if words else file


def _answer(task: Task) -> str:
    file, _ = _focus(task)
    terms = ", ".join(f"`{t}`" for t in _terms(task))
    return f"From reading {file}: {terms}."


def whole_lines(task: Task, repos_dir: Path | None) -> tuple[str, str]:
    """The edit that undoes the mutation, as whole lines (Codex's patches need whole lines),
    when a checkout of the repository is at hand; else the mutation's own text."""
    assert task.grading.test is not None
    m = task.grading.test.mutations[0]
    source = repos_dir / task.repo / m.file if repos_dir else None
    if source is None or not source.is_file():
        return m.replace, m.search
    mutated = source.read_text().replace(m.search, m.replace)
    start = mutated.rfind("\n", 0, mutated.index(m.replace)) + 1
    end = mutated.index("\n", mutated.index(m.replace) + len(m.replace)) + 1
    old = mutated[start:end]
    fixed = old.replace(m.replace, m.search)
    if mutated.count(old) != 1 or mutated.replace(old, fixed) != source.read_text():
        raise SystemExit(f"{task.id}: the scripted fix is ambiguous: {old!r} is not unique in "
                         f"the mutated {m.file} (make the mutation's replace text unique)")
    return old, fixed


LONG_FILE = 2000
"""Claude Code's Read shows the first 2,000 lines of a file; its Edit refuses a file read only
so far, so the edit of a longer file is preceded by a read of the lines around the mutation."""


def _read_action(task: Task, repos_dir: Path | None) -> dict[str, object]:
    assert task.grading.test is not None
    m = task.grading.test.mutations[0]
    source = repos_dir / task.repo / m.file if repos_dir else None
    if source is None or not source.is_file():
        return {"read": m.file}
    text = source.read_text()
    if text.count("\n") <= LONG_FILE:
        return {"read": m.file}
    line = text[:text.index(m.search)].count("\n") + 1
    start = max(1, line - 40)
    return {"read_lines": {"path": m.file, "offset": start, "limit": 120}}


def scripts_for(task: Task, repos_dir: Path | None = None) -> list[dict[str, object]]:
    mark = marker(task)
    if task.control:
        answer = " ".join(_terms(task))
        step = {"answer": f"Answer: {answer}", "usage": _usage(900, 40, write=600)}
        wrong = {"wrong_answer_probability": 0.05,
                 "wrong_answer": "I am not sure; I cannot tell without more context."}
        return [
            {"id": f"{task.id}/codesearch",
             "match": {"prompt_contains": mark, "tool_prefix": "mcp__codesearch__"},
             "steps": [step], "variation": {"token_jitter": 0.1, **wrong}},
            {"id": f"{task.id}/baseline", "match": {"prompt_contains": mark},
             "steps": [step], "variation": {"token_jitter": 0.1, **wrong}},
        ]
    file, key = _focus(task)
    first = {"text": "Looking at the layout first.", "tools": [{"bash": "ls"}],
             "usage": _usage(1800, 30, write=900)}
    look_tool = {"tools": [{"mcp": {"server": "codesearch", "tool": "search",
                                    "input": {"query": key}}}],
                 "usage": _usage(450, 60, read=2700)}
    look_base = [{"tools": [{"grep": {"pattern": key, "path": "."}}],
                  "usage": _usage(900, 60, read=2700)},
                 {"tools": [{"read": file}], "usage": _usage(3200, 40, read=3600)}]
    if task.type == "edit":
        assert task.grading.test is not None
        m = task.grading.test.mutations[0]
        old, new = whole_lines(task, repos_dir)
        fix = {"text": "Undoing the faulty change.",
               "tools": [{"edit": {"path": m.file, "old": old, "new": new}}],
               "usage": _usage(2500, 110, read=3400)}
        final = {"answer": f"Fixed in {m.file}.", "usage": _usage(300, 30, read=6400)}
        wrong: dict[str, object] = {}
        read = {"tools": [_read_action(task, repos_dir)], "usage": _usage(2400, 40, read=3100)}
        tool_steps = [first, look_tool, read, fix, final]
        base_read = _read_action(task, repos_dir)
        base_look = look_base[1] if "read" in base_read else {**look_base[1],
                                                              "tools": [base_read]}
        base_steps = [first, look_base[0], base_look, fix, final]
    else:
        final = {"answer": _answer(task), "usage": _usage(500, 90, read=3400)}
        answer = task.grading.answer
        assert answer is not None
        bad = answer.forbidden[0] if answer.forbidden else "I could not find it in the code."
        wrong = {"wrong_answer": f"From reading {file}: {bad}."}
        tool_steps = [first, look_tool, final]
        base_steps = [first, *look_base, final]
    extra = {"tools": [{"bash": "ls -R"}], "usage": _usage(2500, 30, read=3000)}
    return [
        {"id": f"{task.id}/codesearch", "tool_search_usage": _usage(350, 25, read=2700),
         "match": {"prompt_contains": mark, "tool_prefix": "mcp__codesearch__"},
         "steps": tool_steps,
         "variation": {"token_jitter": 0.15,
                       **({"wrong_answer_probability": 0.05, **wrong} if wrong else {})}},
        {"id": f"{task.id}/baseline", "match": {"prompt_contains": mark}, "steps": base_steps,
         "variation": {"token_jitter": 0.15, "extra_step_probability": 0.2, "extra_step": extra,
                       **({"wrong_answer_probability": 0.12, **wrong} if wrong else {})}},
    ]


def main(argv: list[str]) -> int:
    """argv: optionally a folder of checkouts (scripts/prepare_checkouts.py) for whole-line
    edits."""
    repos_dir = Path(argv[0]) if argv else None
    corpus = load_corpus(ROOT / "corpus")
    out_dir = ROOT / "corpus" / "scripts"
    out_dir.mkdir(exist_ok=True)
    tasks = sorted(corpus.tasks.values(), key=lambda t: t.id)
    for t in tasks:
        others = [o for o in tasks if o.id != t.id and marker(t) in o.prompt]
        if others:
            raise SystemExit(f"{t.id}: marker {marker(t)!r} also matches {others[0].id}")
    for repo in sorted({t.repo for t in tasks}):
        scripts = [s for t in tasks if t.repo == repo and t.id not in DEMO_TASKS
                   for s in scripts_for(t, repos_dir)]
        head = (f"# Generated by scripts/corpus_scripts.py from corpus/tasks/{repo}/: a baseline "
                "and a code-search arm per task.\n# Review and commit; rerun after adding tasks.\n")
        body = yaml.dump({"version": 1, "scripts": scripts}, Dumper=_Dumper, sort_keys=False,
                         width=100, allow_unicode=True)
        (out_dir / f"{repo}-corpus.yaml").write_text(head + body)
        print(f"{repo}: {len(scripts)} scripts")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
