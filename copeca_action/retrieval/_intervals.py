"""Half-open integer intervals `[start, end)`: the algebra behind span metrics.

A *set* of intervals is a sorted list of disjoint, non-empty, non-adjacent intervals (the form
`merge` returns). Every function here accepts any list and returns that normal form, so callers
never need to think about overlap or order.
"""

from __future__ import annotations

from collections.abc import Iterable

Interval = tuple[int, int]
"""`(start, end)`, end exclusive; empty when `end <= start`."""


def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """The union of `intervals` as a normal-form set (touching intervals are joined)."""
    items = sorted(iv for iv in intervals if iv[1] > iv[0])
    out: list[Interval] = []
    for start, end in items:
        if out and start <= out[-1][1]:
            if end > out[-1][1]:
                out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def union(a: Iterable[Interval], b: Iterable[Interval]) -> list[Interval]:
    return merge([*a, *b])


def measure(intervals: Iterable[Interval]) -> int:
    """Total length covered, each point counted once."""
    return sum(end - start for start, end in merge(intervals))


def intersection(a: Iterable[Interval], b: Iterable[Interval]) -> list[Interval]:
    """Points in both sets, by one merge-walk over the normal forms."""
    left, right = merge(a), merge(b)
    out: list[Interval] = []
    i = j = 0
    while i < len(left) and j < len(right):
        start = max(left[i][0], right[j][0])
        end = min(left[i][1], right[j][1])
        if start < end:
            out.append((start, end))
        if left[i][1] < right[j][1]:
            i += 1
        else:
            j += 1
    return out


def intersection_measure(a: Iterable[Interval], b: Iterable[Interval]) -> int:
    return sum(end - start for start, end in intersection(a, b))


def overlaps(interval: Interval, normal: list[Interval]) -> bool:
    """Whether a non-empty `interval` shares a point with the normal-form set `normal`."""
    start, end = interval
    if end <= start:
        return False
    lo, hi = 0, len(normal)
    while lo < hi:  # first interval whose end is after `start`
        mid = (lo + hi) // 2
        if normal[mid][1] <= start:
            lo = mid + 1
        else:
            hi = mid
    return lo < len(normal) and normal[lo][0] < end
