"""Measuring one workload: primal, s2s_ad's gradient, the hand-written one, and each peer."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

import s2s_ad
from benchmarks import compiled, fifty_lines
from benchmarks.cases import Case
from benchmarks.check import max_abs_difference
from benchmarks.outside import OutsideReferences
from benchmarks.peers import Peer, describe_failure
from benchmarks.timing import Budget, best_seconds_each, first_call_seconds


@dataclass
class PeerResult:
    """A peer on one workload: seconds per gradient and its distance from the hand-written one,
    or why it could not run."""

    seconds: Optional[float] = None
    max_error: Optional[float] = None
    failure: Optional[str] = None
    first_call: Optional[float] = None
    compile_seconds: Optional[float] = None  # for a peer that compiles: its first call minus a cached one


@dataclass
class OutsideResult:
    """The same workload as written in ``../shared/bench`` (its own primal and arguments): seconds
    of its hand-written gradient and of s2s_ad's gradient of its primal, and their difference."""

    hand: float
    ours: float
    max_error: float


@dataclass
class CaseResult:
    """Seconds per call of each contender on one workload, and how far s2s_ad is from the hand gradient."""

    name: str
    summary: str
    primal: float
    ours: float
    hand: float
    first_call: float
    max_error: float
    peers: dict[str, PeerResult] = field(default_factory=dict)
    compiled: dict[str, PeerResult] = field(default_factory=dict)  # "hand-numba", "ours-numba"
    outside: Optional[OutsideResult] = None  # against ../shared/bench's reference, when loaded

    @property
    def transform(self) -> float:
        """The first gradient call (which generates and compiles the code) minus a cached call."""
        return self.first_call - self.ours

    def ratios(self) -> dict[str, Optional[float]]:
        """The figures the table shows, all ratios of times taken in this run."""
        figures: dict[str, Optional[float]] = {
            "ours/primal": self.ours / self.primal, "hand/primal": self.hand / self.primal,
            "ours/hand": self.ours / self.hand}
        if self.outside is not None:
            against_outside = self.outside.ours / self.outside.hand
            figures["ours/hand outside"] = against_outside
            figures["ours/hand tighter"] = max(self.ours / self.hand, against_outside)
        hand_numba = self.compiled.get("hand-numba", PeerResult()).seconds
        ours_numba = self.compiled.get("ours-numba", PeerResult()).seconds
        figures["ours/hand-numba"] = self.ours / hand_numba if hand_numba else None
        figures["ours-numba/hand-numba"] = ours_numba / hand_numba if ours_numba and hand_numba else None
        for name, peer in self.peers.items():
            figures[f"ours/{name}"] = self.ours / peer.seconds if peer.seconds else None
        return figures


def _as_tuple(gradient: Any) -> tuple:
    return tuple(gradient) if isinstance(gradient, tuple) else (gradient,)


def _ready_peer(peer: Peer, case: Case, args: tuple, hand: tuple,
                budget: Budget) -> tuple[Optional[tuple], PeerResult]:
    """A peer's ``(gradient, its arguments)`` for this case after one timed and checked call,
    or why it cannot run it (or, past ``budget.slowest_call``, why it is not timed further).
    The arguments are converted here, once, outside the timed calls."""
    try:
        peer_args = peer.convert(case, args)
        gradient = peer.make(case, peer_args)
        first_call, result = first_call_seconds(gradient, peer_args)
        error = max_abs_difference(_as_tuple(result), hand)
    except Exception as exc:  # a peer that cannot run a workload is reported, not fatal
        return None, PeerResult(failure=describe_failure(exc))
    if budget.slowest_call is not None and first_call > budget.slowest_call:
        return None, PeerResult(max_error=error, first_call=first_call,
                                failure=f"left out of this mode: its first call took {first_call:.3g} s")
    return (gradient, peer_args), PeerResult(max_error=error, first_call=first_call)


def _ready_compiled(made: compiled.Compiled, args: tuple, hand: tuple) -> tuple[Optional[tuple], PeerResult]:
    """A compiled gradient after its first call (which compiles it), checked against the hand one."""
    if made.gradient is None:
        return None, PeerResult(failure=made.missing)
    try:
        first_call, result = first_call_seconds(made.gradient, args)
        error = max_abs_difference(_as_tuple(result), hand)
    except Exception as exc:  # a compile or run failure is reported in the table, not fatal
        return None, PeerResult(failure=describe_failure(exc))
    return (made.gradient, args), PeerResult(max_error=error, first_call=first_call)


def measure_case(case: Case, budget: Budget, peers: Sequence[Peer],
                 outside: Optional[OutsideReferences] = None) -> CaseResult:
    """Measure one workload at its benchmark size.

    The first s2s_ad call comes first, so that it is the one that generates the
    code (as long as nothing differentiated this function earlier in the process).
    """
    args = case.make_args(False)
    ours_gradient = s2s_ad.grad(case.function, wrt=case.wrt)
    first_call, ours = first_call_seconds(ours_gradient, args)
    hand = _as_tuple(case.hand_gradient(*args))
    calls = {"primal": (case.function, args), "ours": (ours_gradient, args), "hand": (case.hand_gradient, args)}
    compiled_results = {}
    for name, made in (("hand-numba", compiled.hand_numba(case)), ("ours-numba", compiled.s2s_ad_numba(case))):
        call, compiled_results[name] = _ready_compiled(made, args, hand)
        if call is not None:
            calls[name] = call
    outside_calls = outside.calls(case.name) if outside is not None else None
    outside_error = None
    if outside is not None and outside_calls is not None:
        calls.update(outside_calls)
        outside_error = outside.max_error(case.name)
    peer_results = {}
    for peer in peers:
        call, peer_results[peer.name] = _ready_peer(peer, case, args, hand, budget)
        if call is not None:
            calls[f"peer {peer.name}"] = call
    seconds = best_seconds_each(calls, budget)
    for name, result in compiled_results.items():
        result.seconds = seconds.get(name)
    for peer in peers:
        result = peer_results[peer.name]
        result.seconds = seconds.get(f"peer {peer.name}")
        if peer.compiles and result.seconds is not None and result.first_call is not None:
            result.compile_seconds = result.first_call - result.seconds
    return CaseResult(name=case.name, summary=case.summary, primal=seconds["primal"], ours=seconds["ours"],
                      hand=seconds["hand"], first_call=first_call,
                      max_error=max_abs_difference(_as_tuple(ours), hand), peers=peer_results,
                      compiled=compiled_results,
                      outside=None if outside_error is None else OutsideResult(
                          hand=seconds["outside hand"], ours=seconds["outside ours"], max_error=outside_error))


def warm_up_square(x: float) -> float:
    """What ``startup_seconds`` differentiates."""
    return x * x


def startup_seconds() -> float:
    """The first s2s_ad transform in the process, of a one-line function: the one-off cost
    (loading the rule templates and so on) that the first workload would otherwise carry."""
    seconds, _ = first_call_seconds(s2s_ad.grad(warm_up_square), (1.5,))
    return seconds


def fifty_line_transform() -> float:
    """The first gradient call of a 50-line function (``fifty_lines.valuation``) minus a cached one:
    what generating and compiling its code costs, once the process has loaded the rules."""
    gradient = s2s_ad.grad(fifty_lines.valuation, wrt=(0, 1, 2, 3))
    args = fifty_lines.valuation_args()
    first, _ = first_call_seconds(gradient, args)
    cached = min(first_call_seconds(gradient, args)[0] for _ in range(5))
    return first - cached


@dataclass
class CallOverhead:
    """A cached s2s_ad gradient call on the tiny rational workload, against the hand-written one."""

    ours: float
    hand: float
    generated_only: Optional[float]  # the generated function called directly, without the wrapper

    @property
    def ratio(self) -> float:
        return self.ours / self.hand


def _generated_function(gradient: Any, args: tuple) -> Optional[Callable[..., Any]]:
    """The code s2s_ad generates for these arguments, compiled here from ``source_for``
    (only when it needs nothing but NumPy and s2s_ad's helpers: the runtime's and the template modules')."""
    from s2s_ad.rules import registry as rules
    from s2s_ad.core import runtime
    namespace: dict[str, Any] = {"np": np, **vars(runtime), **rules.helpers()}
    try:
        exec(compile(gradient.source_for(*args), "<generated>", "exec"), namespace)
    except Exception:
        return None
    functions = [v for k, v in namespace.items() if k.startswith("d_") and callable(v)]
    return functions[0] if len(functions) == 1 else None


def call_overhead(case: Case, budget: Budget) -> CallOverhead:
    """Cost of a cached ``s2s_ad.grad(f)(...)`` call on a tiny workload against the hand gradient."""
    args = case.make_args(False)
    gradient = s2s_ad.grad(case.function, wrt=case.wrt)
    gradient(*args)
    calls = {"ours": (gradient, args), "hand": (case.hand_gradient, args)}
    generated = _generated_function(gradient, args)
    if generated is not None:
        calls["generated"] = (generated, args)
    seconds = best_seconds_each(calls, budget)
    return CallOverhead(ours=seconds["ours"], hand=seconds["hand"], generated_only=seconds.get("generated"))
