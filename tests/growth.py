"""Linear-time checks without a clock budget: how the cost grows, not how long it takes.

A fixed budget ("under 2 s") fails on a loaded machine and passes a quadratic algorithm on
a fast one. `assert_linear` runs the same work on an input and on one `factor` times
larger (built before timing) and compares their CPU times (process time: other processes
do not count): linear work grows about `factor` times, quadratic `factor`² (16 for 4), so
the limit (10 by default) has a wide margin both ways. Each size runs `repeat` times and
the fastest run counts, with the garbage collector paused, so one hiccup does not decide.
Sizes should be where a quadratic path would dominate (the original reproductions' sizes
are the large input).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any

MIN_SECONDS = 0.002  # the small run's floor: below it the timer, not the code, is measured


def cpu_seconds(fn: Callable[[Any], Any], arg: Any, repeat: int = 3) -> float:
    """The fastest of `repeat` runs of fn(arg), in CPU seconds of this process."""
    best = float("inf")
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            t0 = time.process_time()
            fn(arg)
            best = min(best, time.process_time() - t0)
    finally:
        if enabled:
            gc.enable()
    return best


def cpu_per_call(fn: Callable[..., Any], *args: Any, min_s: float = MIN_SECONDS) -> float:
    """CPU seconds one fn(*args) call takes: each of three rounds repeats the call until
    `min_s` has passed (a fast call is not lost in the timer's resolution); the fastest
    round's average counts."""
    best = float("inf")
    for _ in range(3):
        n, t0 = 0, time.process_time()
        while True:
            fn(*args)
            n += 1
            spent = time.process_time() - t0
            if spent >= min_s:
                break
        best = min(best, spent / n)
    return best


def growth(fn: Callable[[Any], Any], make: Callable[[int], Any], small: int, factor: int = 4,
           repeat: int = 3) -> float:
    """CPU time of fn(make(factor * small)) over fn(make(small))."""
    a, b = make(small), make(small * factor)
    fn(a)  # warm up: imports, compiled patterns, caches
    t_small = cpu_seconds(fn, a, repeat)
    return cpu_seconds(fn, b, repeat) / max(t_small, MIN_SECONDS)  # the large input runs last


def assert_linear(fn: Callable[[Any], Any], make: Callable[[int], Any], small: int, *,
                  factor: int = 4, limit: float | None = None, repeat: int = 3, what: str = "") -> None:
    """fn on an input `factor` times larger costs less than `limit` times as much."""
    limit = limit or factor * 2.5
    ratio = growth(fn, make, small, factor, repeat)
    if ratio >= limit:  # measured again before failing: a quadratic path fails both times
        ratio = min(ratio, growth(fn, make, small, factor, repeat))
    assert ratio < limit, (f"{what or fn}: {factor}x the input took {ratio:.1f}x the CPU time "
                           f"(linear ~{factor}x, quadratic ~{factor * factor}x)")
