"""Gradient benchmarks: s2s_ad against hand-written gradients and any installed peers.

    python -m benchmarks [--quick] [--check] [--json PATH] [--only NAME ...]
    python benchmarks/command_line.py ...            (the same)

For every workload it prints, in one table, the primal time and ratios of
times taken in this run: s2s_ad's gradient / primal, hand-written / primal,
s2s_ad / hand-written, s2s_ad / each installed peer (autograd, JAX without
and with jit, PyTorch, Tangent: see ``peers.py``), the first call's code
generation time beside ``jax.jit``'s compile time, and the largest
difference between s2s_ad's gradient and the hand-written one.  Nothing is
asserted about speed.  ``--check`` then compares both gradients with
central finite differences on small sizes, and exits with status 1 if one
disagrees (``--check-only`` does just that).

BLAS runs on one thread unless OPENBLAS_NUM_THREADS / OMP_NUM_THREADS /
MKL_NUM_THREADS say otherwise: on a small machine, threads waking up add
more noise than they save on these sizes.  (PyTorch's own thread pool
follows OMP_NUM_THREADS too; XLA's, under JAX, does not.)
"""
from __future__ import annotations

import os
import sys

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # before NumPy is first imported

if __package__ in (None, ""):  # run as a script: make the repository's top folder importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import argparse  # noqa: E402
from typing import Optional, Sequence  # noqa: E402

from benchmarks import cases as cases_module  # noqa: E402
from benchmarks.check import run_checks  # noqa: E402
from benchmarks.measure import call_overhead, fifty_line_transform, measure_case, startup_seconds  # noqa: E402
from benchmarks.peers import find_peers  # noqa: E402
from benchmarks.report import print_extras, print_table, seconds_text, write_json  # noqa: E402
from benchmarks.timing import FULL, QUICK, steady_allocator  # noqa: E402


def parse_arguments(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="shorter measurements (3 repeats of 5 ms or more, instead of 7 of 50 ms or more)")
    parser.add_argument("--check", action="store_true",
                        help="also check hand-written and s2s_ad gradients against finite differences")
    parser.add_argument("--check-only", action="store_true", help="run the check and nothing else")
    parser.add_argument("--json", metavar="PATH", help="also write the results to PATH as JSON")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help="run only these workloads (separated by spaces or commas)")
    parser.add_argument("--no-peers", action="store_true", help="leave out autograd, JAX, PyTorch and Tangent")
    parser.add_argument("--system-malloc", action="store_true",
                        help="leave glibc's malloc thresholds as they are (see timing.steady_allocator)")
    return parser.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the benchmarks (and the check, if asked); return the exit status."""
    options = parse_arguments(argv)
    selected = cases_module.select([name for item in options.only or () for name in item.split(",") if name])
    if options.check_only:
        return 0 if run_checks(selected) else 1
    budget = QUICK if options.quick else FULL
    mode = "quick" if options.quick else "full"
    peers, unusable = ([], {}) if options.no_peers else find_peers()
    peer_names = [peer.name for peer in peers]
    steady = not options.system_malloc and steady_allocator()
    print(f"workloads: {', '.join(case.name for case in selected)}; "
          f"peers installed: {', '.join(peer_names) or 'none'}; mode: {mode}; "
          f"malloc: {'large blocks from the heap (steady)' if steady else 'as the system has it'}")
    for name, reason in unusable.items():
        print(f"  {name} is installed but does not import here, so it is left out ({reason})")
    startup = startup_seconds()
    results = []
    for case in selected:
        result = measure_case(case, budget, peers)
        print(f"  {case.name:<13} done: ours {seconds_text(result.ours)}, hand {seconds_text(result.hand)}",
              flush=True)
        results.append(result)
    print_table(results, peer_names, mode, [f"{peer.name} {peer.note}" for peer in peers if peer.note])
    overhead = call_overhead(cases_module.CASES[0], budget)
    fifty = fifty_line_transform()
    print_extras(startup, fifty, overhead)
    if options.json:
        write_json(options.json, results, startup, overhead, mode, peer_names, unusable, fifty)
        print(f"results written to {options.json}")
    if options.check:  # after the timings: the check would otherwise build (and cache) the code first
        print()
        return 0 if run_checks(selected) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
