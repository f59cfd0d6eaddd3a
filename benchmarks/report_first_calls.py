"""Printing the first-call and memory measurements of ``first_calls.py``."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from benchmarks.first_calls import MEMORY_LIMIT, TIME_LIMIT, Probe, limit_text
from benchmarks.report import seconds_text

# (title, contender, field): a column of the first-call table
_COLUMNS = (
    ("s2s_ad first", "s2s_ad", "first_call"),
    ("s2s_ad steady", "s2s_ad", "steady"),
    ("numba first", "s2s_ad-numba", "first_call"),
    ("numba from cache", "s2s_ad-numba cached", "first_call"),
    ("its imports", "s2s_ad-numba cached", "imports"),
    ("from cache, no SciPy", "s2s_ad-numba cached, no SciPy", "first_call"),
    ("numba steady", "s2s_ad-numba", "steady"),
    ("hand-numba first", "hand-numba", "first_call"),
    ("hand-numba from cache", "hand-numba cached", "first_call"),
    ("hand-numba from cache, no SciPy", "hand-numba cached, no SciPy", "first_call"),
    ("jax.jit first", "jax.jit", "first_call"),
    ("jax.jit steady", "jax.jit", "steady"),
    ("scan first", "jax.jit scan", "first_call"),
    ("scan steady", "jax.jit scan", "steady"),
)


def _short(failure: str) -> str:
    """A failure as a table cell; the whole reason goes in a footnote."""
    for words in ("timed out", "out of memory", "n/a"):
        if failure.startswith(words):
            return words
    return "refused" if not failure.startswith("failed") else "failed"


def _cell(probe: Optional[Probe], field: str) -> str:
    if probe is None:
        return "-"
    if probe.failure is not None:
        return _short(probe.failure)
    value = getattr(probe, field) if field != "imports" else (probe.extra or {}).get("imports")
    return seconds_text(value) if value is not None else "-"


def _ratio(numerator: Optional[Probe], denominator: Optional[Probe]) -> str:
    if numerator is None or denominator is None or numerator.steady is None or denominator.steady is None:
        return "n/a"
    return f"{numerator.steady / denominator.steady:.3g}"


def _best_jax(row: dict[str, Probe]) -> Optional[Probe]:
    """The faster compiled JAX gradient of a workload (the workload as written, or its scan rewrite)."""
    timed = [row[name] for name in ("jax.jit", "jax.jit scan") if name in row and row[name].steady is not None]
    return min(timed, key=lambda probe: probe.steady or 0.0) if timed else None


def print_first_calls(results: dict[str, dict[str, Probe]]) -> None:
    """One row per workload: first and steady calls of each contender, each first call in a new
    process; then the steady ratios against the faster compiled JAX gradient; then the reasons."""
    contenders = {name for row in results.values() for name in row}
    columns = [column for column in _COLUMNS if column[1] in contenders]
    with_jax, with_numba = "jax.jit" in contenders, "s2s_ad-numba" in contenders
    ratios = [("ours/jax.jit", "s2s_ad")] * with_jax + [("numba/jax.jit", "s2s_ad-numba")] * (with_jax and with_numba)
    titles = ["workload"] + [title for title, _, _ in columns] + [title for title, _ in ratios]
    widths = [13] + [max(len(title), 9) for title in titles[1:]]
    print(f"\nfirst calls (each in a new process, after its imports; limits {TIME_LIMIT:.0f} s and "
          f"{limit_text(MEMORY_LIMIT)} of address space)")
    print("  ".join(f"{t:<{w}}" if i == 0 else f"{t:>{w}}" for i, (t, w) in enumerate(zip(titles, widths))))
    notes = []
    for workload, row in results.items():
        cells = [workload] + [_cell(row.get(contender), field) for _, contender, field in columns]
        best = _best_jax(row)
        cells += [_ratio(row.get(contender), best) for _, contender in ratios]
        print("  ".join(f"{c:<{w}}" if i == 0 else f"{c:>{w}}" for i, (c, w) in enumerate(zip(cells, widths))))
        notes += [f"{name} on {workload}: {probe.failure}" for name, probe in row.items() if probe.failure]
        notes += [f"{name} on {workload}: gradient differs from the hand-written one by {probe.max_error:.1e}"
                  for name, probe in row.items() if probe.max_error is not None and probe.max_error > 1e-6]
    print("first: the first gradient call (transform or trace, compile, run), after the imports; numba: s2s_ad's "
          "backend='numba'; from cache: the same in a second new process reading the Numba cache the first wrote "
          "(s2s_ad's transform and Numba's first-call set-up in a process, no compile); its imports: that process's "
          "import s2s_ad and numba, not in the first call; steady: a later call; hand-numba: the hand gradient's "
          "twin under numba.njit(cache=True), the floor of a compiled first call (Numba's part alone)")
    if any("cached, no SciPy" in name for name in contenders):
        print("no SciPy: from the cache again, SciPy hidden (a stub package raising ImportError first on the path): "
              "Numba imports SciPy's BLAS at its first dispatch in a process, which a process without SciPy does not "
              "pay; the cache of that run is compiled without SciPy too (no workload calls SciPy itself, but Numba's matmul "
              "calls SciPy's BLAS: mlp cannot compile there)")
    if with_jax:
        print("scan: jax.jit(jax.grad) of a lax.scan REWRITE of the loop (benchmarks/jax_rewrites.py), not the "
              "workload as written; x/jax.jit: steady time over the faster of jax.jit and scan")
    for note in notes:
        print(f"  note: {note}")


def _bytes_text(count: Optional[int]) -> str:
    return "n/a" if count is None else f"{count / (1 << 20):.1f} MiB"


def print_memory(results: dict[str, Probe], steps: int) -> None:
    """Each contender's memory over one long poly_loop gradient, and its gradient against s2s_ad's."""
    print(f"\nmemory: one poly_loop gradient of {steps:,} steps, each in a new process after a 1000-step call")
    print(f"{'gradient':<14} {'time':>9} {'peak RSS growth':>16} {'tracemalloc peak':>17} {'vs s2s_ad':>10}")
    reference = results.get("s2s_ad")
    base = reference.extra["gradient"] if reference and reference.extra else None
    for name, probe in results.items():
        if probe.failure is not None or probe.extra is None:
            print(f"{name:<14} {probe.failure}")
            continue
        gradient = probe.extra["gradient"]
        difference = "n/a" if base is None else f"{max(abs(a - b) for a, b in zip(gradient, base)):.1e}"
        print(f"{name:<14} {seconds_text(probe.first_call):>9} {_bytes_text(probe.extra['rss_growth']):>16} "
              f"{_bytes_text(probe.extra.get('traced_peak')):>17} {difference:>10}")
    print("peak RSS growth: the resident high-water mark during the call (reset before it) minus the resident "
          "memory before it; tracemalloc sees Python's allocations only (not Numba's), so it is given for Python code")
    if any(p.extra and not p.extra.get("rss_exact", True) for p in results.values()):
        print("  note: the high-water mark could not be reset here (no /proc/self/clear_refs): the RSS growth "
              "is the process's lifetime peak's, a lower bound")


def as_json(first: Optional[dict[str, dict[str, Probe]]], memory: Optional[dict[str, Probe]]) -> dict[str, Any]:
    """The measurements for ``report.write_json``."""
    return {"first_calls": None if first is None else {w: {n: vars(p) for n, p in row.items()}
                                                       for w, row in first.items()},
            "memory_long_loop": None if memory is None else {n: vars(p) for n, p in memory.items()}}


def contenders_for_memory(with_numba: bool) -> Sequence[str]:
    """The gradients whose memory is measured: s2s_ad's and the hand one, each compiled too where Numba is."""
    return ("s2s_ad", "hand") + (("s2s_ad-numba", "hand-numba") if with_numba else ())
