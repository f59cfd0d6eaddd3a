"""Printing the results as one table, and writing them as JSON."""
from __future__ import annotations

import json
import platform
import statistics
from typing import Any, Optional, Sequence

import numpy as np

from benchmarks.measure import CallOverhead, CaseResult

PEER_TOLERANCE = 1e-6  # a peer farther than this (relative) from the hand gradient gets a footnote


def seconds_text(seconds: Optional[float]) -> str:
    """A duration with a unit that keeps three significant figures readable."""
    if seconds is None:
        return "n/a"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _ratio_text(ratio: Optional[float]) -> str:
    return "n/a" if ratio is None else f"{ratio:.3g}"


def compiling_peers(results: Sequence[CaseResult], peer_names: Sequence[str]) -> list[str]:
    """The peers (in table order) whose compile time was measured on some workload."""
    return [name for name in peer_names
            if any(name in r.peers and r.peers[name].compile_seconds is not None for r in results)]


def has_outside(results: Sequence[CaseResult]) -> bool:
    """Whether the outside references were timed on some workload."""
    return any(result.outside is not None for result in results)


def _columns(peer_names: Sequence[str], compiled: Sequence[str], outside: bool) -> list[tuple[str, int]]:
    fixed = [("workload", 13), ("primal", 9), ("ours/primal", 11), ("hand/primal", 11), ("ours/hand", 9)]
    if outside:
        fixed += [("ours/hand outside", 17), ("ours/hand tighter", 17)]
    fixed += [("hand-numba", 10), ("ours/hand-numba", 15), ("ours-numba/hand-numba", 20)]
    return fixed + [(f"ours/{name}", max(9, len(name) + 5)) for name in peer_names] + [
        ("transform", 9)] + [(f"{name} compile", len(name) + 8) for name in compiled] + [("max|ours-hand|", 14)]


def _row(result: CaseResult, peer_names: Sequence[str], compiled: Sequence[str], outside: bool) -> list[str]:
    ratios = result.ratios()
    cells = [result.name, seconds_text(result.primal), _ratio_text(ratios["ours/primal"]),
             _ratio_text(ratios["hand/primal"]), _ratio_text(ratios["ours/hand"])]
    if outside:
        cells += [_ratio_text(ratios.get("ours/hand outside")), _ratio_text(ratios.get("ours/hand tighter"))]
    hand_numba = result.compiled.get("hand-numba")
    cells += [seconds_text(hand_numba.seconds if hand_numba else None), _ratio_text(ratios["ours/hand-numba"]),
              _ratio_text(ratios["ours-numba/hand-numba"])]
    cells += [_ratio_text(ratios.get(f"ours/{name}")) for name in peer_names]
    cells.append(seconds_text(result.transform))
    cells += [seconds_text(result.peers[name].compile_seconds if name in result.peers else None)
              for name in compiled]
    return cells + [f"{result.max_error:.1e}"]


def _compiled_footnotes(results: Sequence[CaseResult]) -> list[str]:
    """Why a compiled column is empty (once, where every workload shares the reason), and any
    compiled gradient that is not the hand-written one."""
    notes = []
    for name in ("hand-numba", "ours-numba"):
        failures = {r.name: r.compiled[name].failure for r in results if name in r.compiled}
        reasons = set(failures.values())
        if len(reasons) == 1 and None not in reasons and len(failures) == len(results):
            notes.append(f"{name}: {reasons.pop()} on every workload")
            continue
        for workload, failure in failures.items():
            if failure:
                notes.append(f"{name} on {workload}: {failure}")
    for result in results:
        for name, compiled in result.compiled.items():
            if compiled.max_error is not None and compiled.max_error > PEER_TOLERANCE:
                notes.append(f"{name} on {result.name}: gradient differs from the hand-written one "
                             f"by {compiled.max_error:.1e}")
        if result.outside is not None and result.outside.max_error > PEER_TOLERANCE:
            notes.append(f"outside on {result.name}: s2s_ad's gradient differs from the outside hand "
                         f"gradient by {result.outside.max_error:.1e}")
    return notes


def _footnotes(results: Sequence[CaseResult]) -> list[str]:
    """Why a peer shows n/a, and any peer whose gradient is not the hand-written one."""
    notes = _compiled_footnotes(results)
    for result in results:
        for name, peer in result.peers.items():
            if peer.failure:
                notes.append(f"{name} on {result.name}: n/a ({peer.failure})")
            elif peer.max_error is not None and peer.max_error > PEER_TOLERANCE:
                notes.append(f"{name} on {result.name}: gradient differs from the hand-written one "
                             f"by {peer.max_error:.1e}")
    return notes


def ours_over_tighter_hand(result: CaseResult) -> float:
    """s2s_ad's gradient time over the hand-written one's, against the tighter reference where
    the outside one was timed too (the larger of the two ratios)."""
    tighter = result.ratios().get("ours/hand tighter")
    return tighter if tighter is not None else result.ours / result.hand


def median_ours_over_hand(results: Sequence[CaseResult]) -> float:
    """The median across workloads of s2s_ad's gradient time over the (tighter) hand-written one's."""
    return statistics.median(ours_over_tighter_hand(result) for result in results)


def print_table(results: Sequence[CaseResult], peer_names: Sequence[str], mode: str,
                peer_notes: Sequence[str] = ()) -> None:
    """The results as one table, then footnotes (``peer_notes`` first) and the median of ours/hand."""
    compiled = compiling_peers(results, peer_names)
    outside = has_outside(results)
    columns = _columns(peer_names, compiled, outside)
    print(f"\ngradient benchmarks ({mode}; times are minima over repeats; ratios of times from this run)")
    print("  ".join(f"{title:<{width}}" if i == 0 else f"{title:>{width}}"
                    for i, (title, width) in enumerate(columns)))
    for result in results:
        cells = _row(result, peer_names, compiled, outside)
        print("  ".join(f"{cell:<{width}}" if i == 0 else f"{cell:>{width}}"
                        for i, (cell, (_, width)) in enumerate(zip(cells, columns))))
    print("primal: time per call of the function itself; transform: the first gradient call minus a "
          "cached one (code generation and compilation; a single measurement)")
    print("hand-numba: the hand-written gradient compiled with numba.njit (benchmarks/numba_twins.py); "
          "ours-numba: s2s_ad.grad(f, backend=\"numba\")")
    if outside:
        print("ours/hand outside: s2s_ad against the hand gradient of the outside folder's own primal; "
              "ours/hand tighter: the larger of the two ratios")
    for name in compiled:
        print(f"{name} compile: likewise, {name}'s first gradient call (tracing and compiling) minus a cached one")
    for note in list(peer_notes) + _footnotes(results):
        print(f"  note: {note}")
    against = " (against the tighter reference)" if outside else ""
    print(f"median ours/hand{against} across {len(results)} workloads: {median_ours_over_hand(results):.2f}")


def print_extras(startup: float, fifty_lines: float, overhead: CallOverhead) -> None:
    """The one-off start-up cost, the transform of a 50-line function, and the cached call overhead
    on the rational workload."""
    print(f"s2s_ad start-up (first transform in the process, a one-line function): {seconds_text(startup)}")
    print(f"transform of a 50-line function (benchmarks/fifty_lines.py; first call minus a cached one): "
          f"{seconds_text(fifty_lines)}")
    line = (f"cached call overhead (rational): s2s_ad.grad(f)(3.0, 2.0) {seconds_text(overhead.ours)} "
            f"vs hand-written {seconds_text(overhead.hand)}: ratio {overhead.ratio:.2f}")
    if overhead.generated_only is not None:
        line += f"; the generated function alone {seconds_text(overhead.generated_only)}"
    print(line)


def _environment() -> dict[str, Any]:
    return {"python": platform.python_version(), "numpy": np.__version__, "machine": platform.machine(),
            "processor": platform.processor()}


def write_json(path: str, results: Sequence[CaseResult], startup: Optional[float],
               overhead: Optional[CallOverhead], mode: str, peer_names: Sequence[str],
               unusable_peers: Optional[dict[str, str]] = None, fifty_lines: Optional[float] = None,
               extra: Optional[dict[str, Any]] = None) -> None:
    """Every measurement (seconds) and ratio of the run, as JSON (``unusable_peers``: libraries
    installed but failing to import, with why)."""
    document = {
        "mode": mode,
        "environment": _environment(),
        "peers": list(peer_names),
        "unusable_peers": dict(unusable_peers or {}),
        "workloads": [{
            "name": r.name, "summary": r.summary, "seconds": {
                "primal": r.primal, "ours": r.ours, "hand": r.hand, "first_call": r.first_call,
                "transform": r.transform, **{f"peer_{n}": p.seconds for n, p in r.peers.items()}},
            "ratios": r.ratios(), "max_abs_error_ours_vs_hand": r.max_error,
            "peers": {n: vars(p) for n, p in r.peers.items()},
            "compiled": {n: vars(p) for n, p in r.compiled.items()},
            "outside": None if r.outside is None else vars(r.outside),
        } for r in results],
        "median_ours_over_hand": median_ours_over_hand(results) if results else None,
        "startup_seconds": startup,
        "fifty_line_transform_seconds": fifty_lines,
        "cached_call_overhead": None if overhead is None else {
            "ours_seconds": overhead.ours, "hand_seconds": overhead.hand, "ratio": overhead.ratio,
            "generated_only_seconds": overhead.generated_only},
        **(extra or {}),
    }
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2)
        handle.write("\n")
