"""Regenerate the task tables in docs/corpus.md from corpus/ (a test fails when they differ)."""

from __future__ import annotations

import sys
from pathlib import Path

from copeca_action.scenario import load_corpus
from copeca_action.scenario._table import replace_section

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    corpus = load_corpus(ROOT / "corpus")
    page = ROOT / "docs" / "corpus.md"
    page.write_text(replace_section(page.read_text(), list(corpus.tasks.values())))
    print(f"{page}: {len(corpus.tasks)} tasks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
