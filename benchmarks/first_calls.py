"""First calls in fresh processes, and the memory of a 10^6-step gradient.

Each measurement runs in a new Python process (``python -m benchmarks.first_calls probe ...``),
so that it pays what a user's script pays on its first gradient: s2s_ad loading its rules,
transforming and compiling; ``jax.jit`` tracing and compiling; Numba compiling, or reading its
disk cache.  The process runs under a time limit (``TIME_LIMIT``) and an address-space limit
(``MEMORY_LIMIT``, ``resource.RLIMIT_AS``): ``jax.jit`` unrolls Python loops, and on the long
ones its compile runs for minutes or exhausts memory, which is reported as "timed out" or
"out of memory" instead of taking the machine down.

Contenders (``CONTENDERS``): ``s2s_ad`` (the Python backend), ``s2s_ad-numba`` (the compiled
backend, ``backend="numba"``, first with an empty ``NUMBA_CACHE_DIR``, then again in a second
process reading that cache), ``hand-numba`` (the hand gradient's twin compiled with
``numba.njit(cache=True)``, the same two ways: the floor of a compiled first call), ``jax.jit`` (``jax.jit(jax.grad(f))`` of the workload as written,
integer arguments static) and ``jax.jit scan`` (``jax_rewrites.py``: the loop rewritten as a
``lax.scan``; a rewrite, labelled as one); ``s2s_ad-auto`` (``backend="auto"``, where it chose Numba
compiling in a thread while the calls run as Python: ``python -m benchmarks.first_calls auto``
prints its first call, when the compiled code was ready, and the steady call).  A probe prints one JSON line: the first call's
seconds, the steady call's (the minimum over a few repeats), and the largest difference from
the NumPy hand gradient; or why it could not run.

What a first call covers: from making the gradient (``s2s_ad.grad(...)``, ``numba.njit(...)``,
``jax.jit(...)``) to its first result, in a process that has already imported the contender's
libraries (``import s2s_ad``, ``import numba``, ``import jax``: timed apart, ``extra["imports"]``).
So for ``s2s_ad-numba`` from the disk cache it is s2s_ad's transform (the rules loaded, the code
generated) plus what Numba does at the first call in a process, compiled or not: it fills its
typing and target registries (importing SciPy for BLAS, among others) and reads the machine code
from its cache.  ``hand-numba``'s first call from the cache pays that same Numba part alone, with
no transform: the floor under ours.  Neither figure includes the imports; a script's first
gradient pays those too (``import numba`` alone is about a third of a second here).
"""
from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

TIME_LIMIT = 60.0           # seconds per probe process
MEMORY_LIMIT = 6 << 30      # bytes of address space per probe process
MEMORY_STEPS = 1_000_000    # poly_loop's steps in the memory measurement
CONTENDERS = ("s2s_ad", "s2s_ad-numba", "s2s_ad-auto", "hand-numba", "jax.jit", "jax.jit scan")
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_OUT_OF_MEMORY_SIGNS = ("MemoryError", "bad_alloc", "RESOURCE_EXHAUSTED", "Cannot allocate memory",
                        "out of memory", "Out of memory")


@dataclass
class Probe:
    """What one probe process reported: seconds and error, or ``failure`` (why there are none)."""

    first_call: Optional[float] = None
    steady: Optional[float] = None
    max_error: Optional[float] = None
    failure: Optional[str] = None
    extra: Optional[dict[str, Any]] = None


def limit_text(memory_limit: int) -> str:
    """A memory limit in GB (or MB, below one GB), for the report."""
    if memory_limit >= 1 << 30:
        return f"{memory_limit / (1 << 30):.3g} GB"
    return f"{memory_limit / (1 << 20):.3g} MB"


_BYTECODE: dict[str, str] = {}


def _bytecode_environment() -> dict[str, str]:
    """``PYTHONPYCACHEPREFIX``, a folder of this run where the probes keep the bytecode of the modules
    they import (s2s_ad's, its template modules, Numba's), filled once before the first probe: an
    installed package has its bytecode, and a first call that imports a module lazily (the rule
    templates; Numba's registries) must not be timed compiling its source, as it would be where
    ``PYTHONDONTWRITEBYTECODE`` is set (which the probes leave out)."""
    if not _BYTECODE:
        folder = tempfile.mkdtemp(prefix="s2s_ad_bytecode_")
        atexit.register(shutil.rmtree, folder, True)
        _BYTECODE["PYTHONPYCACHEPREFIX"] = folder
        env = dict(os.environ, PYTHONPYCACHEPREFIX=folder)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPATH"] = os.pathsep.join([_ROOT] + [p for p in [env.get("PYTHONPATH")] if p])
        warm = ("import s2s_ad, s2s_ad.rules.registry as r; r.load_templates()\n"
                "try:\n    import numba, s2s_ad.targets.numba.runtime\nexcept ImportError:\n    pass\n")
        subprocess.run([sys.executable, "-c", warm], cwd=_ROOT, env=env, capture_output=True, timeout=TIME_LIMIT)
    return dict(_BYTECODE)


def run_probe(arguments: Sequence[str], environment: Optional[dict[str, str]] = None,
              time_limit: float = TIME_LIMIT, memory_limit: int = MEMORY_LIMIT) -> Probe:
    """Run ``python -m benchmarks.first_calls ARGUMENTS`` in a new process under the limits:
    ``time_limit`` seconds and ``memory_limit`` bytes of address space.  The child sets the
    memory limit itself, first thing (``main``): a ``preexec_fn`` would make ``subprocess`` run
    the fork handlers of a parent that has imported JAX, which warn of deadlocks."""
    env = dict(os.environ, **_bytecode_environment(), **(environment or {}))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join([_ROOT] + [p for p in [env.get("PYTHONPATH")] if p])
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(variable, "1")
    command = [sys.executable, "-m", "benchmarks.first_calls", "--memory-limit", str(memory_limit), *arguments]
    try:
        done = subprocess.run(command, cwd=_ROOT, env=env, capture_output=True, text=True,
                              timeout=time_limit)
    except subprocess.TimeoutExpired:
        return Probe(failure=f"timed out ({time_limit:.0f} s)")
    lines = done.stdout.strip().splitlines()
    if done.returncode == 0 and lines:
        return Probe(**json.loads(lines[-1]))
    if any(sign in done.stderr for sign in _OUT_OF_MEMORY_SIGNS):
        return Probe(failure=f"out of memory ({limit_text(memory_limit)} limit)")
    last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    return Probe(failure=f"failed: {last[:160]}")


# -- in the probe process -----------------------------------------------------------------


def _as_tuple(gradient: Any) -> tuple:
    return tuple(gradient) if isinstance(gradient, tuple) else (gradient,)


def _make_gradient(contender: str, case: Any, args: tuple) -> tuple[Callable[..., Any], tuple]:
    """The contender's gradient of ``case`` and the arguments it takes; raises ``LookupError``
    with the reason where the contender has none."""
    if contender in ("s2s_ad", "s2s_ad-auto"):
        import s2s_ad
        return s2s_ad.grad(case.function, wrt=case.wrt, backend="auto" if contender == "s2s_ad-auto" else "python"), args
    if contender == "s2s_ad-numba":
        from benchmarks import compiled
        made = compiled.s2s_ad_numba(case)
        if made.gradient is None:
            raise LookupError(made.missing)
        return made.gradient, args
    if contender == "hand-numba":  # the floor of a compiled first call: Numba's own costs
        from benchmarks import compiled
        from benchmarks.numba_twins import TWINS
        numba, reason = compiled.numba_or_reason()
        if numba is None:
            raise LookupError(reason)
        return numba.njit(cache=True)(TWINS[case.name]), args
    try:
        import jax
    except ImportError:
        raise LookupError("n/a (jax not installed)") from None
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    function: Callable[..., Any]
    if contender == "jax.jit":
        from benchmarks.peers import rebound
        function = rebound(case.function, jnp)
    else:
        from benchmarks.jax_rewrites import REWRITES
        if case.name not in REWRITES:
            raise LookupError("n/a (no lax.scan rewrite)")
        function = REWRITES[case.name]
    static = tuple(i for i, a in enumerate(args) if isinstance(a, int))
    jitted = jax.jit(jax.grad(function, argnums=case.argnums), static_argnums=static)
    converted = tuple(jax.device_put(a) if hasattr(a, "shape") else a for a in args)
    return (lambda *call_args: jax.block_until_ready(jitted(*call_args))), converted


def _import_library(contender: str) -> None:
    """Import what the contender needs, so that its first call is timed without the imports."""
    if contender.startswith("s2s_ad") or contender == "hand-numba":
        import s2s_ad  # noqa: F401
        if contender.endswith("numba"):
            from benchmarks import compiled
            compiled.numba_or_reason()
    else:
        try:
            import jax  # noqa: F401
        except ImportError:
            pass  # _make_gradient says so


def probe_first_call(contender: str, workload: str) -> dict[str, Any]:
    """Time the contender's first gradient call in this (fresh) process, after its imports,
    then its steady call."""
    import numpy as np

    from benchmarks.cases import select
    from benchmarks.check import max_abs_difference
    from benchmarks.timing import QUICK, best_seconds_each, steady_allocator
    steady_allocator()  # as in the benchmark's own process, so the steady figures compare
    case = select([workload])[0]
    args = case.make_args(False)
    start = time.perf_counter()
    _import_library(contender)
    imports = time.perf_counter() - start
    if contender in ("s2s_ad-numba", "s2s_ad-auto"):  # a fallback to the Python backend is reported, never timed as compiled
        import warnings

        import s2s_ad
        warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)
    try:
        start = time.perf_counter()
        gradient, call_args = _make_gradient(contender, case, args)
        result = gradient(*call_args)
        first = time.perf_counter() - start
    except LookupError as missing:
        return {"failure": str(missing)}
    except Exception as exc:  # a tracer that refuses the workload: reported, not fatal
        return {"failure": f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:120]}"}
    extra: dict[str, Any] = {"imports": imports}
    if contender == "s2s_ad-auto":  # (Numba compiling in a thread: the steady call is the compiled one)
        waited = getattr(gradient, "wait_compiled")()
        extra.update(compiled_after=time.perf_counter() - start, chose=gradient.backend_chosen.backend,  # type: ignore[attr-defined]
                     compiled=waited)
        result = gradient(*call_args)
    steady = best_seconds_each({"call": (gradient, call_args)}, QUICK)["call"]
    hand = _as_tuple(case.hand_gradient(*args))
    error = max_abs_difference(tuple(np.asarray(g) for g in _as_tuple(result)), hand)
    return {"first_call": first, "steady": steady, "max_error": error, "extra": extra}


def auto_first_calls(workloads: Sequence[str]) -> None:
    """``backend="auto"``'s first calls, each in a new process with an empty Numba cache folder: the
    first call, when the compiled code was ready (counted from the same start; Numba compiling in a
    thread where auto chose it), and the steady call after it."""
    print("| workload | auto chose | first call | compiled code ready after | steady call |")
    print("|---|---|---:|---:|---:|")
    for workload in workloads:
        with tempfile.TemporaryDirectory(prefix="s2s_ad_numba_cache_") as folder:
            found = run_probe(["probe", "s2s_ad-auto", workload], {"NUMBA_CACHE_DIR": folder})
        if found.failure is not None or found.first_call is None or found.steady is None:
            print(f"| {workload} | {found.failure} | | | |", flush=True)
            continue
        extra = found.extra or {}
        ready = f"{extra['compiled_after']:.2f} s" if extra.get("chose") == "numba" else "(Python backend)"
        print(f"| {workload} | {extra.get('chose')} | {found.first_call * 1e3:.0f} ms | {ready} | "
              f"{found.steady * 1e6:.1f} us |", flush=True)


def _status_kib(key: str) -> int:
    """A ``VmRSS``/``VmHWM`` figure of this process, in KiB, from /proc/self/status (Linux)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise OSError(f"no {key} in /proc/self/status")


def _start_peak() -> tuple[int, bool]:
    """The resident memory now (bytes), with the high-water mark reset to it (Linux: writing 5 to
    /proc/self/clear_refs), so that the mark afterwards is the peak of what runs in between.
    Where that cannot be done, the process's lifetime peak (``ru_maxrss``) stands in, and the
    second value is False: the growth measured is then only a lower bound."""
    import resource
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as clear:
            clear.write("5")
        return _status_kib("VmRSS") * 1024, True
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, False


def _peak_since(reset: bool) -> int:
    import resource
    if reset:
        return _status_kib("VmHWM") * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def probe_memory(contender: str, steps: int) -> dict[str, Any]:
    """The growth of the process's peak resident memory (and, for Python code, the peak that
    ``tracemalloc`` sees) over one gradient of poly_loop with ``steps`` steps, after a call with
    1000 steps has built or compiled the code."""
    import tracemalloc

    from benchmarks import workloads
    from benchmarks.cases import select
    case = select(["poly_loop"])[0]
    if contender == "hand":
        gradient: Callable[..., Any] = workloads.poly_loop_grad
    elif contender == "hand-numba":
        from benchmarks import compiled
        made = compiled.hand_numba(case)
        if made.gradient is None:
            return {"failure": made.missing}
        gradient = made.gradient
    else:
        try:
            gradient, _ = _make_gradient(contender, case, ())
        except LookupError as missing:
            return {"failure": str(missing)}
    gradient(3.1, 0.2, 1000)
    before, reset = _start_peak()
    start = time.perf_counter()
    result = gradient(3.1, 0.2, steps)
    seconds = time.perf_counter() - start
    extra: dict[str, Any] = {"rss_growth": _peak_since(reset) - before, "rss_exact": reset,
                             "gradient": [float(g) for g in result]}
    if contender in ("s2s_ad", "hand"):  # tracemalloc sees Python's allocations, not Numba's
        tracemalloc.start()
        gradient(3.1, 0.2, steps)
        extra["traced_peak"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return {"first_call": seconds, "extra": extra}


# -- in the benchmark's process -------------------------------------------------------------


def numba_first_calls(contender: str, workload: str) -> dict[str, Probe]:
    """A Numba-compiled gradient (``s2s_ad-numba`` or ``hand-numba``): a process with an empty
    Numba cache folder (``CONTENDER``), then a second process reading the cache the first one wrote
    (``CONTENDER cached``); where SciPy is installed, the same two with SciPy hidden, in a cache folder
    of their own (``CONTENDER cached, no SciPy``, the second: see ``_scipy_hidden``).  A workload that
    needs SciPy (Numba's matmul calls its BLAS) fails there, saying so."""
    with tempfile.TemporaryDirectory(prefix="s2s_ad_numba_cache_") as folder:
        cold = run_probe(["probe", contender, workload], {"NUMBA_CACHE_DIR": folder})
        if cold.failure is not None:
            return {contender: cold, f"{contender} cached": Probe(failure=cold.failure)}
        found = {contender: cold, f"{contender} cached": run_probe(["probe", contender, workload],
                                                                   {"NUMBA_CACHE_DIR": folder})}
    hidden = _scipy_hidden()
    if hidden is not None:  # a cache of its own, compiled without SciPy: one made with SciPy's BLAS needs it
        without = {"PYTHONPATH": os.pathsep.join([hidden, _ROOT])}
        with tempfile.TemporaryDirectory(prefix="s2s_ad_numba_cache_") as folder:
            cold = run_probe(["probe", contender, workload], {"NUMBA_CACHE_DIR": folder, **without})
            found[f"{contender} cached, no SciPy"] = cold if cold.failure is not None else run_probe(
                ["probe", contender, workload], {"NUMBA_CACHE_DIR": folder, **without})
    return found


_HIDDEN: list[str] = []


def _scipy_hidden() -> Optional[str]:
    """A folder whose ``scipy`` package raises ImportError, for the front of a probe's path; None where
    SciPy is not installed (every probe runs without it already).  Numba imports SciPy's BLAS at its
    first dispatch in a process (``numba/np/arraymath.py``, ``_check_blas``), which a process without
    SciPy does not pay; none of the workloads uses SciPy, so the probe measures that part apart."""
    try:
        import importlib.util
        if importlib.util.find_spec("scipy") is None:
            return None
    except (ImportError, ValueError):
        return None
    if not _HIDDEN:
        folder = tempfile.mkdtemp(prefix="s2s_ad_no_scipy_")
        atexit.register(shutil.rmtree, folder, True)
        os.makedirs(os.path.join(folder, "scipy"))
        with open(os.path.join(folder, "scipy", "__init__.py"), "w") as stub:
            stub.write('raise ImportError("SciPy hidden by benchmarks/first_calls.py for this measurement")\n')
        _HIDDEN.append(folder)
    return _HIDDEN[0]


def first_calls(workloads: Sequence[str], with_jax: bool, with_numba: bool,
                with_ours_numba: bool) -> dict[str, dict[str, Probe]]:
    """For each workload, each contender's probe (``hand-numba`` and its ``cached`` runs only
    ``with_numba``, ``s2s_ad-numba`` and its ``cached`` runs only ``with_ours_numba``, the JAX
    ones only ``with_jax``), printing a line as each finishes."""
    results: dict[str, dict[str, Probe]] = {}
    for workload in workloads:
        row = {"s2s_ad": run_probe(["probe", "s2s_ad", workload])}
        for contender, wanted in (("s2s_ad-numba", with_ours_numba), ("hand-numba", with_numba)):
            if wanted:
                row.update(numba_first_calls(contender, workload))
        if with_jax:
            for contender in ("jax.jit", "jax.jit scan"):
                row[contender] = run_probe(["probe", contender, workload])
        print(f"  {workload:<13} first calls done", flush=True)
        results[workload] = row
    return results


def memory_of_long_loop(contenders: Sequence[str], steps: int = MEMORY_STEPS) -> dict[str, Probe]:
    """Each contender's memory over one poly_loop gradient of ``steps`` steps, in its own process."""
    return {name: run_probe(["memory", name, str(steps)], time_limit=4 * TIME_LIMIT) for name in contenders}


def main(argv: Sequence[str]) -> int:
    """``[--memory-limit BYTES] probe CONTENDER WORKLOAD`` or ``... memory CONTENDER STEPS``: one
    JSON line on stdout.  The limit is set before anything else is imported.  ``auto [WORKLOAD ...]``:
    the table of ``auto_first_calls``."""
    if len(argv) >= 2 and argv[0] == "--memory-limit":
        import resource  # Unix only, as the probes are
        limit = int(argv[1])
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        argv = argv[2:]
    if len(argv) == 3 and argv[0] == "probe":
        print(json.dumps(probe_first_call(argv[1], argv[2])))
        return 0
    if argv and argv[0] == "auto":  # auto [WORKLOAD ...]: the table of auto_first_calls
        from benchmarks.cases import CASES
        auto_first_calls(argv[1:] or [case.name for case in CASES])
        return 0
    if len(argv) == 3 and argv[0] == "memory":
        print(json.dumps(probe_memory(argv[1], int(argv[2]))))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
