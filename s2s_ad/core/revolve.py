"""The binomial checkpointing schedule (Revolve) of ``checkpointed(range(n), snapshots=c)``.

Griewank and Walther's Revolve (ACM TOMS 26(1), 2000, Algorithm 799) reverses
``n`` steps holding at most ``c`` snapshots of the state with the fewest
possible loop-body executions that are not recorded ("advances"):

    t(n, c) = r * n - beta(c + 1, r - 1),   beta(c, r) = C(c + r, c),

``r`` the integer with ``beta(c, r - 1) < n <= beta(c, r)`` (each step runs
unrecorded at most ``r`` times).  The schedule here is that recursion walked
turn by turn, as the generated code needs it: the forward sweep advances to
the last step keeping snapshots, and records the last step; then for each
step ``j`` from ``n - 2`` down to 0 the reverse sweep restores the newest
snapshot (at ``p <= j``), advances from ``p`` to ``j`` keeping snapshots
(``p``'s again when ``p < j``), records step ``j`` and reverses it.  Every
split is one the recursion proves optimal, so the advances sum to
``t(n, c)`` exactly (tests/test_binomial_checkpointing.py checks it against
the formula and a brute-force search).  This is a few dozen lines of our own
rather than ``pyrevolve`` (a C++ extension) or ``checkpoint_schedules`` (a
dependency whose actions would need translating anyway): the schedule is pure
Python computed at run time from ``n``.
"""
from __future__ import annotations

import math
from typing import Optional


def beta(c: int, r: int) -> int:
    """``C(c + r, c)``: how many steps ``c`` snapshots reverse running each step at most ``r`` times
    (0 for ``r < 0``)."""
    return math.comb(c + r, c) if r >= 0 and c + r >= 0 else 0


def repetitions(n: int, c: int) -> int:
    """The ``r`` with ``beta(c, r - 1) < n <= beta(c, r)`` (0 for ``n <= 1``)."""
    r = 0
    while beta(c, r) < n:
        r += 1
    return r


def advances(n: int, c: int) -> int:
    """Revolve's minimum ``t(n, c)`` of unrecorded steps to reverse ``n`` steps with ``c`` snapshots."""
    if n <= 1:
        return 0
    r = repetitions(n, c)
    return r * n - beta(c + 1, r - 1)


def split(n: int, c: int) -> int:
    """How far to advance (``1 <= m < n``) before the next snapshot, reversing ``n >= 2`` steps with
    ``c`` snapshots (the starting state's included): an ``m`` whose left part ``m`` (``c`` snapshots)
    and right part ``n - m`` (``c - 1``) reach ``t(n, c)`` together with the ``m`` advances."""
    if c == 1:
        return n - 1
    r = repetitions(n, c)
    # the left part reversed in r - 1 repetitions, the right part in r: their costs, linear in m on
    # these intervals, add up to r * n - beta(c + 1, r - 1) (Pascal's rule)
    low = max(beta(c, r - 2), n - beta(c - 1, r), 1)
    high = min(beta(c, r - 1), n - beta(c - 1, r - 1), n - 1)
    assert low <= high, (n, c)
    return high


class Schedule:
    """One run of a checkpointed loop's binomial schedule: which steps to advance and which snapshots
    the tape holds (``held``, their positions, oldest first), with what it counted."""

    def __init__(self, n: int, c: int, line: Optional[int] = None) -> None:
        if int(c) < 1:
            raise ValueError(f"checkpointed(..., snapshots={c}): at least one snapshot is needed")
        self.n, self.c, self.line = int(n), int(c), line
        self.held: list[int] = []
        self.advances = self.taped = self.peak = 0

    def chain(self, start: int, turn: int, free: int) -> list[slice]:
        """From the state at ``start`` to the state at ``turn`` with ``free`` snapshots (``start``'s
        included): the segments to advance, a snapshot kept at the start of each."""
        segments = []
        while turn > start:
            stop = start + split(turn + 1 - start, free)
            self.held.append(start)
            segments.append(slice(start, stop))
            self.advances += stop - start
            start, free = stop, free - 1
        self.peak = max(self.peak, len(self.held))
        return segments

    def forward(self) -> list[slice]:
        """The forward sweep: the segments before the last step (which it records)."""
        self.taped += self.n > 0
        return self.chain(0, self.n - 1, self.c) if self.n > 0 else []

    def turn(self, step: int) -> list[slice]:
        """Step ``step`` of the reverse sweep (``step < n - 1``), once the newest snapshot is restored:
        the segments to advance before recording ``step``."""
        start = self.held.pop()
        assert start <= step, (start, step)
        self.taped += 1
        return self.chain(start, step, self.c - len(self.held))
