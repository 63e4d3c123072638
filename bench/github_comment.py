"""Speed of the GitHub layer: rendering the comment, and one upsert against a local fake API
that checks every call against GitHub's OpenAPI description (120 existing comments).

Prints figures; nothing is asserted. Run: .venv/bin/python bench/github_comment.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "unit" / "github"))

from fake_github import FakeGitHub  # noqa: E402
from sample import sample_comment  # noqa: E402

from copeca_action.github import (  # noqa: E402
    GitHubClient,
    RetryPolicy,
    marker,
    render_comment,
    upsert_comment,
)


def timed(fn: object, repeat: int) -> tuple[float, float]:
    """Median and max seconds of `repeat` calls."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t0)
    return statistics.median(times), max(times)


def main() -> None:
    small, large = sample_comment(tasks=20), sample_comment(tasks=400, note="n" * 150)
    for label, data in (("20 tasks", small), ("400 tasks (truncated)", large)):
        med, worst = timed(lambda d=data: render_comment(d), 20)
        size = len(render_comment(data))
        print(f"render {label}: median {med * 1000:.1f} ms, max {worst * 1000:.1f} ms, "
              f"{size:,} characters")
    with FakeGitHub() as fake:
        fake.seed("o", "r", 1, [f"comment {i}" for i in range(119)])
        fake.seed("o", "r", 1, [marker("copeca") + "\nold"], bot=True)
        client = GitHubClient("test-token-123", fake.url, policy=RetryPolicy())
        body = render_comment(small)
        med, worst = timed(lambda: upsert_comment(client, "o", "r", 1, "copeca", body,
                                                             author="github-actions[bot]"), 10)
        print(f"upsert with 120 comments (2 pages + PATCH, validated): median "
              f"{med * 1000:.1f} ms, max {worst * 1000:.1f} ms; violations: "
              f"{len(fake.violations)}")


if __name__ == "__main__":
    main()
