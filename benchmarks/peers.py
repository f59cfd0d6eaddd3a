"""Other automatic differentiation libraries to compare with, used only when installed.

None is required: each is imported inside a ``try``, and one that is missing
is left out (one that is installed but fails to import is named, with why).

* autograd and JAX run the very same workload source as s2s_ad, with ``np``
  bound to their NumPy wrapper.  JAX appears twice: ``jax`` is
  ``jax.grad(f)`` called as it is, ``jax.jit`` is ``jax.jit(jax.grad(f))``,
  whose first call traces and compiles (that compile time, the first call
  minus a cached one, is reported beside s2s_ad's own transform time).
  Integer arguments (``n`` in poly_loop) are static for ``jax.jit``, since
  the loop that ``range(n)`` drives is unrolled when traced; rk4 unrolls
  too far to compile, so ``jax.jit`` is not given it (``JIT_NOT_ATTEMPTED``).
* PyTorch has no NumPy-compatible namespace, so ``torch_workloads.py`` keeps
  a port of each workload; its gradient is ``torch.autograd.grad``.
* Tangent reads the source as s2s_ad does.  Its last release (0.1.9) uses
  gast's node classes from before gast 0.3 (``gast.Num``) while s2s_ad
  needs gast 0.5 or later, so it cannot import beside s2s_ad.

A peer that cannot run a workload (JAX and autograd refuse ``temp[t + 1] =
...``, for instance) shows as "n/a" with its reason.

Each peer gets the arguments in its own array type, converted once before
timing (``Peer.convert``): JAX arrays for JAX, tensors for PyTorch, as
someone using that library would hold their data.  PyTorch's gradients are
turned back into NumPy inside the timed call (``Tensor.numpy()`` shares the
memory, so this costs no copy); JAX's are left as JAX arrays.
"""
from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from benchmarks.cases import Case

Gradient = Callable[..., tuple]
GradientMaker = Callable[[Case, tuple], Gradient]
ArgumentConverter = Callable[[Case, tuple], tuple]


def same_arguments(case: Case, args: tuple) -> tuple:
    """The NumPy arguments as they are (for peers that take NumPy arrays)."""
    return args


@dataclass(frozen=True)
class Peer:
    """An installed library.  ``convert(case, args)`` turns the NumPy arguments into the peer's
    own (once, outside the timed calls); ``make(case, converted)`` returns ``gradient(*converted)``,
    a tuple like the hand-written gradient's.  ``compiles``: its first call compiles code, whose
    time the report shows.  ``note``: how it is called, for a footnote under the table."""

    name: str
    make: GradientMaker
    convert: ArgumentConverter = same_arguments
    compiles: bool = False
    note: str = ""


def describe_failure(exc: BaseException) -> str:
    """An exception's type and the start of its first line, for a footnote."""
    first_line = (str(exc).strip().splitlines() or [""])[0]
    return f"{type(exc).__name__}: {first_line[:120]}"


def _with_namespace(function: types.FunctionType, namespace: dict) -> types.FunctionType:
    copy = types.FunctionType(function.__code__, namespace, function.__name__,
                              function.__defaults__, function.__closure__)
    copy.__kwdefaults__ = function.__kwdefaults__
    return copy


def rebound(function: Callable[..., Any], numpy_like: Any) -> types.FunctionType:
    """``function`` with ``np`` meaning ``numpy_like``, and so for the helpers of its module it calls."""
    if not isinstance(function, types.FunctionType):
        raise TypeError(f"{function!r} is not a Python function, so its names cannot be rebound")
    namespace = dict(function.__globals__)
    namespace["np"] = numpy_like
    for name, value in list(namespace.items()):
        if isinstance(value, types.FunctionType) and value.__module__ == function.__module__:
            namespace[name] = _with_namespace(value, namespace)
    return namespace[function.__name__]


# Workloads jax.jit is not given in the benchmark's own process, and why.  Tracing unrolls
# Python loops, so the compiled gradient holds every step: poly_loop's 1000 steps compile in
# about 15 s and 1.6 GB, and rk4's 500 steps of 4 stages, each calling a helper, did not finish
# compiling in 10 minutes and were then killed for running out of memory (24 GB).  The loops
# are compiled instead in new processes under a time and a memory limit (first_calls.py).
_IN_A_SUBPROCESS = ("not attempted here: its unrolled loop is compiled in a new process under time and memory "
                    "limits (the first-call table)")
JIT_NOT_ATTEMPTED = {"poly_loop": _IN_A_SUBPROCESS, "rk4": _IN_A_SUBPROCESS}


def _autograd() -> list[Peer]:
    import autograd
    import autograd.numpy as anp

    def make(case: Case, args: tuple) -> Gradient:
        return autograd.grad(rebound(case.function, anp), case.argnums)
    return [Peer("autograd", make)]


def _jax() -> list[Peer]:
    """``jax`` (no jit) and ``jax.jit``."""
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)  # the workloads are float64

    def convert(case: Case, args: tuple) -> tuple:
        return tuple(jax.device_put(a) if isinstance(a, np.ndarray) else a for a in args)

    def make(case: Case, args: tuple) -> Gradient:
        gradient = jax.grad(rebound(case.function, jnp), argnums=case.argnums)
        return lambda *call_args: jax.block_until_ready(gradient(*call_args))

    def make_jit(case: Case, args: tuple) -> Gradient:
        if case.name in JIT_NOT_ATTEMPTED:
            raise NotImplementedError(JIT_NOT_ATTEMPTED[case.name])
        static = tuple(i for i, a in enumerate(args) if isinstance(a, int))  # loop counts, unrolled
        gradient = jax.jit(jax.grad(rebound(case.function, jnp), argnums=case.argnums), static_argnums=static)
        return lambda *call_args: jax.block_until_ready(gradient(*call_args))
    return [Peer("jax", make, convert,
                 note="and jax.jit take JAX arrays, converted from NumPy once, outside the timed calls"),
            Peer("jax.jit", make_jit, convert, compiles=True,
                 note="makes integer arguments static: the loops they count are unrolled when traced")]


def _torch() -> list[Peer]:
    import torch

    from benchmarks.torch_workloads import PORTS

    def convert(case: Case, args: tuple) -> tuple:
        """Arrays become tensors sharing their memory, and the differentiated arguments
        (arrays or floats) tensors that require a gradient; other numbers stay as they are."""
        converted = []
        for i, a in enumerate(args):
            if isinstance(a, np.ndarray):
                a = torch.from_numpy(a)
            elif i in case.argnums:
                a = torch.tensor(a, dtype=torch.float64)
            converted.append(a.requires_grad_() if i in case.argnums else a)
        return tuple(converted)

    def as_numpy(gradient: torch.Tensor) -> Any:
        return gradient.item() if gradient.dim() == 0 else gradient.numpy()

    def make(case: Case, args: tuple) -> Gradient:
        if case.name not in PORTS:
            raise NotImplementedError("no PyTorch port of this workload in torch_workloads.py")
        function, argnums = PORTS[case.name], case.argnums

        def gradient(*call_args: Any) -> tuple:
            wrt = [call_args[i] for i in argnums]
            return tuple(as_numpy(g) for g in torch.autograd.grad(function(*call_args), wrt))
        return gradient
    return [Peer("torch", make, convert,
                 note="runs the ports in torch_workloads.py on tensors converted from NumPy once, outside "
                      "the timed calls; its gradients become NumPy (no copy) inside them")]


def _tangent() -> list[Peer]:
    import tangent

    def make(case: Case, args: tuple) -> Gradient:
        gradient = tangent.grad(case.function, wrt=case.argnums)
        if len(case.argnums) > 1:
            return gradient
        return lambda *call_args: (gradient(*call_args),)
    return [Peer("tangent", make)]


# (the module whose absence means "not installed", the function that makes its peers), in table order
_FACTORIES: tuple[tuple[str, Callable[[], list[Peer]]], ...] = (
    ("autograd", _autograd), ("jax", _jax), ("torch", _torch), ("tangent", _tangent))


def find_peers() -> tuple[list[Peer], dict[str, str]]:
    """The peers that import here, in a fixed order, and for each library that is installed
    but fails to import (Tangent with a newer gast, say) why."""
    peers: list[Peer] = []
    broken: dict[str, str] = {}
    for module, factory in _FACTORIES:
        try:
            peers += factory()
        except ModuleNotFoundError as exc:
            if exc.name != module:  # the library is there, one of its dependencies is not
                broken[module] = describe_failure(exc)
        except Exception as exc:  # installed, but broken by its own dependencies
            broken[module] = describe_failure(exc)
    return peers, broken


def installed_peers() -> list[Peer]:
    """The peers that import here, in a fixed order."""
    return find_peers()[0]
