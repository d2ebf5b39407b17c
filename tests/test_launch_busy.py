"""GPU busy time per iteration (analysis/launch.py): the one-pass sweep over instances already in (iteration,
start, end) order and the sort it falls back to give the same sums, in the same order."""

from __future__ import annotations

import random
from types import SimpleNamespace

from kernelscope.analysis.kernels import KernelInstance
from kernelscope.analysis.launch import _busy_per_iteration, _busy_sorted


def _ka(spans):
    return SimpleNamespace(instances=tuple(
        KernelInstance("k", "triton", "triton", ts, dur, it, None, None, None, False) for it, ts, dur in spans))


def test_ordered_instances_sum_the_union_of_their_intervals():
    # iteration 0: [0, 10) and [5, 12) overlap (12 busy), then [20, 21); iteration 1: one inside another
    ka = _ka([(0, 0.0, 10.0), (0, 5.0, 7.0), (0, 20.0, 1.0), (1, 30.0, 10.0), (1, 31.0, 2.0)])
    assert _busy_per_iteration(ka) == {0: 13.0, 1: 10.0} == _busy_sorted(ka)


def test_any_order_gives_what_the_sort_gives():
    rng = random.Random(7)
    for case in range(300):
        spans = [(rng.randrange(4), float(rng.randrange(50)), float(rng.randrange(0, 9)))
                 for _ in range(rng.randrange(1, 25))]
        if case % 2:  # half of them in sorted order: the one-pass sweep's own path
            spans.sort(key=lambda s: (s[0], s[1], s[1] + s[2]))
        if case % 7 == 0:
            spans.append((spans[0][0], float("nan"), 1.0))
        ka = _ka(spans)
        fast, slow = _busy_per_iteration(ka), _busy_sorted(ka)
        assert list(fast.items()) == list(slow.items()) or (
            str(list(fast.items())) == str(list(slow.items()))), spans  # (NaN sums: equal as text)
