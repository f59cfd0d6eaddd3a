"""Gradient benchmarks: s2s_ad against hand-written gradients and any installed peers.

    python -m benchmarks [--quick] [--check] [--json PATH] [--only NAME ...] [--outside PATH]
    python benchmarks/command_line.py ...            (the same)

For every workload it prints, in one table, the primal time and ratios of
times taken in this run: s2s_ad's gradient / primal, hand-written / primal,
s2s_ad / hand-written (and against the outside references of
``../shared/bench`` when they are there: ``outside.py``), s2s_ad / the
hand-written gradient compiled with ``numba.njit`` and s2s_ad's own compiled
backend / that (``compiled.py``; both only where Numba is installed, the
second only where ``s2s_ad.grad`` takes ``backend=``), s2s_ad / each
installed peer (autograd, JAX without and with jit, PyTorch, Tangent: see
``peers.py``), the first call's code generation time beside ``jax.jit``'s
compile time, and the largest difference between s2s_ad's gradient and the
hand-written one.  A full run then measures first calls in new processes
(s2s_ad's, its compiled backend's from an empty and from a filled Numba
cache, ``jax.jit``'s of the workload as written and of a ``lax.scan``
rewrite, under time and memory limits: ``first_calls.py``) and the memory
of a 10^6-step gradient.  Nothing is asserted about speed.  ``--check`` then compares both gradients with
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
from benchmarks import compiled, first_calls, outside, report_first_calls  # noqa: E402
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
    parser.add_argument("--outside", metavar="PATH",
                        help="the folder of outside hand-written references (default: ../shared/bench beside "
                             "the checkout, used when it is there)")
    parser.add_argument("--first-calls", action=argparse.BooleanOptionalAction, default=None,
                        help="first calls in new processes, and the memory of a 10^6-step gradient "
                             "(default: on in a full run, off with --quick)")
    parser.add_argument("--system-malloc", action="store_true",
                        help="leave glibc's malloc thresholds as they are (see timing.steady_allocator)")
    return parser.parse_args(argv)


def compiled_line() -> str:
    """What the compiled columns hold in this run, or why they are empty."""
    numba, reason = compiled.numba_or_reason()
    if numba is None:
        return f"compiled columns: {reason}: hand-numba and ours-numba are left empty"
    ours = compiled.s2s_ad_numba_missing()
    return (f"compiled columns: numba {numba.__version__}: hand-numba measured; ours-numba "
            + ("measured (s2s_ad.grad(f, backend='numba'))" if ours is None else ours))


def measure_first_calls(options: argparse.Namespace, selected: Sequence[cases_module.Case],
                        with_jax: bool) -> tuple[Optional[dict], Optional[dict]]:
    """The first-call table and the memory of a long loop, when asked for (or in a full run)."""
    wanted = options.first_calls if options.first_calls is not None else not options.quick
    if not wanted:
        print("\nfirst calls and memory: left out (--quick; --first-calls measures them)")
        return None, None
    with_ours_numba = compiled.s2s_ad_numba_missing() is None
    with_numba = compiled.numba_or_reason()[0] is not None
    print(f"\nfirst calls in new processes (s2s_ad{', its numba backend' if with_ours_numba else ''}"
          f"{', the hand gradient under numba.njit' if with_numba else ''}{', jax.jit' if with_jax else ''}):",
          flush=True)
    first = first_calls.first_calls([case.name for case in selected], with_jax, with_numba, with_ours_numba)
    report_first_calls.print_first_calls(first)
    memory = first_calls.memory_of_long_loop(
        [name for name in report_first_calls.contenders_for_memory(with_numba)
         if name != "s2s_ad-numba" or with_ours_numba])
    report_first_calls.print_memory(memory, first_calls.MEMORY_STEPS)
    return first, memory


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
    references, references_line = outside.load(options.outside)
    print(references_line)
    print(compiled_line())
    startup = startup_seconds()
    results = []
    for case in selected:
        result = measure_case(case, budget, peers, references)
        print(f"  {case.name:<13} done: ours {seconds_text(result.ours)}, hand {seconds_text(result.hand)}",
              flush=True)
        results.append(result)
    print_table(results, peer_names, mode, [f"{peer.name} {peer.note}" for peer in peers if peer.note])
    overhead = call_overhead(cases_module.CASES[0], budget)
    fifty = fifty_line_transform()
    print_extras(startup, fifty, overhead)
    first, memory = measure_first_calls(options, selected, "jax" in peer_names)
    if options.json:
        write_json(options.json, results, startup, overhead, mode, peer_names, unusable, fifty,
                   report_first_calls.as_json(first, memory))
        print(f"results written to {options.json}")
    if options.check:  # after the timings: the check would otherwise build (and cache) the code first
        print()
        return 0 if run_checks(selected) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
