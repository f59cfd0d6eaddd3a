"""The binomial schedule (``core/revolve.py``) compiled: ``checkpointed(steps, snapshots=c)`` and
``while checkpointed(test, snapshots=c)`` under ``backend="numba"`` (imports numba at ``register``).

Input: the generated code's calls of ``runtime.snapshots``, ``revolve``, ``revolve_forward``,
``revolve_last``, ``revolve_reverse`` and ``revolve_turn`` (``ad/binomial.py`` writes them; the
snapshots themselves are the tape's, a typed list of the state's tuples, ``numba/tape.py``).
Output: Numba implementations of those calls.  The Python ``Schedule`` object becomes one int64
array, preallocated for its ``c`` snapshots::

    [n, c, line, counted, advances, taped, peak, held, peak_bytes, held positions (c of them)...]

and the split of each chain is ``core/revolve.split``'s, written again here in integers (Numba has
no ``math.comb``): the same segments, so the same arithmetic in the same order as the Python run,
and the same counts.  What a run counted reaches ``df.stats()`` once per sweep, through one call
into Python (``numba.objmode``) at the end of the forward sweep's chain and at the reverse sweep's
last turn: ``runtime.add_checkpoint_stats``.  (No annotations: Numba requires an overload's typing
function and its implementation to have the same signature.)
"""
from __future__ import annotations

from ...core import runtime

# positions in the schedule's array
N, C, LINE, COUNTED, ADVANCES, TAPED, PEAK, HELD, PEAK_BYTES, FIRST = range(10)


def register(overload, types):
    """Register the implementations (``numba.runtime._register`` calls it once)."""
    import numba
    import numpy as np

    @numba.njit(cache=False)
    def beta(c, r):
        """``C(c + r, c)``, 0 for ``r < 0`` (``revolve.beta``), by the product formula in integers."""
        if r < 0 or c + r < 0:
            return 0
        value = 1
        for i in range(1, r + 1):
            value = value * (c + i) // i
        return value

    @numba.njit(cache=False)
    def split(n, c):
        """``revolve.split``: how far to advance before the next snapshot."""
        if c == 1:
            return n - 1
        r = 0
        while beta(c, r) < n:
            r += 1
        return min(beta(c, r - 1), n - beta(c - 1, r - 1), n - 1)

    @numba.njit(cache=False)
    def chain(s, start, turn, free):
        """``Schedule.chain``: the segments from ``start`` to ``turn``, a snapshot kept at each start."""
        segments = [slice(0, 0)]
        segments.pop()
        while turn > start:
            stop = start + split(turn + 1 - start, free)
            s[FIRST + s[HELD]] = start
            s[HELD] += 1
            segments.append(slice(start, stop))
            s[ADVANCES] += stop - start
            start, free = stop, free - 1
        s[PEAK] = max(s[PEAK], s[HELD])
        return segments

    @numba.njit(cache=False)
    def schedule(n, c, line, counted):
        if c < 1:
            raise ValueError("checkpointed(..., snapshots=c): at least one snapshot is needed")
        s = np.zeros(FIRST + c, dtype=np.int64)
        s[N], s[C], s[LINE], s[COUNTED] = max(n, 0), c, line, counted
        return s

    @numba.njit(cache=False)
    def forward(s):
        if s[N] > 0:
            return chain(s, 0, s[N] - 1, s[C])
        segments = [slice(0, 0)]
        segments.pop()
        return segments

    def add(line, c, steps, counted, advances, taped, peak, peak_bytes, runs):
        runtime.add_checkpoint_stats(None if line < 0 else line, c, steps, counted + advances, taped, peak,
                                     peak_bytes, runs)

    @numba.njit(cache=False)
    def report(s, runs):
        """What the sweep counted, into ``df.stats()`` (one call into Python); the counts start again."""
        line, c, steps, counted, advances = s[LINE], s[C], s[N] * runs, s[COUNTED] * runs, s[ADVANCES]
        taped, peak, peak_bytes = s[TAPED], s[PEAK], s[PEAK_BYTES]
        with numba.objmode():
            add(line, c, steps, counted, advances, taped, peak, peak_bytes, runs)
        s[ADVANCES] = s[TAPED] = 0

    def sizes(state):
        """An implementation of ``size(state)``, the bytes of a tuple of the state's values (a number
        8): the tuple's length is known when typing, so it is summed item by item."""
        terms = " + ".join(f"nbytes(state[{i}])" for i in range(len(state))) or "0"
        scope = {"nbytes": nbytes}
        exec(f"def size(state):\n    return {terms}\n", scope)  # (Numba cannot iterate a tuple of mixed types)
        return numba.njit(cache=False)(scope["size"])

    def nbytes(value):
        """``value.nbytes``, 8 for a number (as ``runtime._count``)."""

    def typed_nbytes(value):
        if isinstance(value, types.Array):
            return lambda value: value.nbytes if value.nbytes > 0 else 8
        return lambda value: 8

    overload(nbytes)(typed_nbytes)

    def count(s, segments, size):
        """``runtime._count``: the step recorded with ``segments`` and the snapshots' most bytes."""

    def typed_count(s, segments, size):
        def counted(s, segments, size):
            s[TAPED] += 1
            s[PEAK_BYTES] = max(s[PEAK_BYTES], s[PEAK] * size)
            return segments
        return counted

    overload(count)(typed_count)

    def typed_snapshots(count):
        if isinstance(count, types.Integer):
            return lambda count: count
        return None

    def typed_revolve(n, snapshots, line=None, counted=0):
        if not isinstance(n, types.Integer) or not isinstance(snapshots, types.Integer):
            return None
        if line is None or isinstance(line, (types.NoneType, types.Omitted)):
            return lambda n, snapshots, line=None, counted=0: schedule(n, snapshots, -1, counted)
        return lambda n, snapshots, line=None, counted=0: schedule(n, snapshots, line, counted)

    def typed_forward(s, *state):
        size = sizes(state)

        def forward_segments(s, *state):
            segments = forward(s)
            if s[N] > 0:  # (the last step, recorded)
                count(s, segments, size(state))
            report(s, 1)
            return segments
        return forward_segments

    def typed_last(s):
        return lambda s: slice(max(s[N] - 1, 0), s[N])

    @numba.njit(cache=False)
    def reverse_schedule(n, snapshots, line):
        s = schedule(n, snapshots, line, 0)
        forward(s)  # (the snapshots the forward sweep left on the tape: counted there)
        s[ADVANCES] = 0
        return s

    def typed_reverse(n, snapshots, line=None):
        if not isinstance(n, types.Integer) or not isinstance(snapshots, types.Integer):
            return None
        if line is None or isinstance(line, (types.NoneType, types.Omitted)):
            return lambda n, snapshots, line=None: reverse_schedule(n, snapshots, -1)
        return lambda n, snapshots, line=None: reverse_schedule(n, snapshots, line)

    def typed_turn(s, step, *state):
        size = sizes(state)

        def turn(s, step, *state):
            s[HELD] -= 1
            start = s[FIRST + s[HELD]]
            if start > step:
                raise AssertionError("the binomial schedule restored a snapshot after the step")
            segments = count(s, chain(s, start, step, s[C] - s[HELD]), size(state))
            if step == 0:  # the reverse sweep's last turn: what it counted, into the stats
                report(s, 0)
            return segments
        return turn

    overload(runtime.snapshots)(typed_snapshots)
    overload(runtime.revolve)(typed_revolve)
    overload(runtime.revolve_forward)(typed_forward)
    overload(runtime.revolve_last)(typed_last)
    overload(runtime.revolve_reverse)(typed_reverse)
    overload(runtime.revolve_turn)(typed_turn)
