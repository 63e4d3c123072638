"""Interval algebra against a model: a set of integer points."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from copeca_action.retrieval import intersection, intersection_measure, measure, merge, union
from copeca_action.retrieval._intervals import overlaps

interval = st.tuples(st.integers(0, 60), st.integers(0, 60))
intervals = st.lists(interval, max_size=8)


def points(ivs: list[tuple[int, int]]) -> set[int]:
    return {p for start, end in ivs for p in range(start, end)}


def is_normal(ivs: list[tuple[int, int]]) -> bool:
    ok = all(start < end for start, end in ivs)
    return ok and all(a[1] < b[0] for a, b in itertools.pairwise(ivs))


@settings(deadline=None)
@given(intervals)
def test_merge_keeps_points_and_is_normal(ivs: list[tuple[int, int]]) -> None:
    merged = merge(ivs)
    assert points(merged) == points(ivs)
    assert is_normal(merged)
    assert merge(merged) == merged


@settings(deadline=None)
@given(intervals)
def test_measure_counts_each_point_once(ivs: list[tuple[int, int]]) -> None:
    assert measure(ivs) == len(points(ivs))


@settings(deadline=None)
@given(intervals, intervals)
def test_union_and_intersection_match_sets(a: list[tuple[int, int]],
                                           b: list[tuple[int, int]]) -> None:
    assert points(union(a, b)) == points(a) | points(b)
    both = intersection(a, b)
    assert points(both) == points(a) & points(b)
    assert is_normal(both)
    assert intersection_measure(a, b) == len(points(a) & points(b))
    assert intersection_measure(a, b) == intersection_measure(b, a)
    # inclusion-exclusion
    assert measure(union(a, b)) == measure(a) + measure(b) - intersection_measure(a, b)


@settings(deadline=None)
@given(interval, intervals)
def test_overlaps_is_a_non_empty_intersection(iv: tuple[int, int],
                                              ivs: list[tuple[int, int]]) -> None:
    assert overlaps(iv, merge(ivs)) == bool(points([iv]) & points(ivs))


def test_hand_cases() -> None:
    assert merge([(5, 7), (0, 2), (2, 3), (10, 10)]) == [(0, 3), (5, 7)]  # touching joined
    assert measure([(0, 10), (5, 15)]) == 15
    assert intersection([(0, 10), (20, 30)], [(5, 25)]) == [(5, 10), (20, 25)]
    assert intersection_measure([(0, 10)], [(10, 20)]) == 0  # end exclusive
    assert not overlaps((10, 20), [(0, 10)])
    assert overlaps((9, 20), [(0, 10)])
