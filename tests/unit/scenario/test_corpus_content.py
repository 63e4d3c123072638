"""The bundled corpus meets its bar (issue #11), and docs/corpus.md shows it as it is."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from copeca_action.scenario import Task, load_corpus
from copeca_action.scenario._table import replace_section


def _tasks(corpus_root: Path) -> list[Task]:
    corpus = load_corpus(corpus_root)
    assert not corpus.problems, [str(p) for p in corpus.problems]
    return list(corpus.tasks.values())


def test_size_and_coverage(corpus_root: Path) -> None:
    """Issue #22: big enough to decide. >= 160 tasks on >= 8 repositories in >= 6 languages,
    every category on every repository, >= 3 controls per repository (>= 24 in all)."""
    tasks = _tasks(corpus_root)
    per_repo = Counter(t.repo for t in tasks)
    assert len(tasks) >= 160
    assert len(per_repo) >= 8
    assert len({t.language for t in tasks}) >= 6
    categories = {"locate", "trace", "fix", "debug", "reason"}
    for repo in per_repo:
        assert {t.category for t in tasks if t.repo == repo} == categories, repo
        assert sum(t.control for t in tasks if t.repo == repo) >= 3, repo
        assert any(t.type == "edit" for t in tasks if t.repo == repo), repo
    assert sum(t.control for t in tasks) >= 24


def test_every_task_is_original_and_says_so(corpus_root: Path) -> None:
    for t in _tasks(corpus_root):
        assert t.source.origin == "original", t.id
        assert t.source.note, t.id


def test_comprehension_tasks_point_at_code_and_edit_tasks_plant_a_bug(corpus_root: Path) -> None:
    for t in _tasks(corpus_root):
        if t.type == "comprehension" and not t.control:
            assert t.gold_context, t.id
            assert t.grading.answer is not None and t.grading.answer.required, t.id
        if t.type == "edit":
            assert t.grading.patch is not None or (
                t.grading.test is not None and t.grading.test.mutations), t.id


def test_answer_terms_are_not_single_common_words(corpus_root: Path) -> None:
    """A required term that is one short dictionary word would be hit by accident."""
    weak = {"the", "and", "a", "an", "is", "it", "yes", "no", "true", "false", "error", "file",
            "function", "value", "request", "response", "route", "handler", "object"}
    for t in _tasks(corpus_root):
        answer = t.grading.answer
        if answer is None:
            continue
        for entry in [*answer.required, *answer.all_of]:
            for term in entry if isinstance(entry, list) else [entry]:
                assert term.lower() not in weak, (t.id, term)


def test_docs_corpus_tables_are_current(root: Path, corpus_root: Path) -> None:
    page = (root / "docs" / "corpus.md").read_text()
    assert page == replace_section(page, _tasks(corpus_root)), (
        "docs/corpus.md is out of date: run `python scripts/corpus_table.py`")
