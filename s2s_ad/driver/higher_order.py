"""Higher order: derivatives as plain functions, each level of ``grad(grad(...))`` one more.

Input: a derivative level built and compiled (a ``pipeline.Built``: the
adjoint of the function, or the function of the level below), its
parameters, the argument kinds and the parameters differentiated by.
Output: a ``Built`` whose function is the next level (``build_gradient_only``:
the gradient alone, as a plain function; ``build_derivative_of``: forward mode
over a scalar level, one ``jvp`` per number differentiated by), and
``lost_outside``: the parameters whose derivative a rule would lose, which the
gradient's function marks for forward mode over it.

Each level is a generated Python function returning exactly what that level
returns, registered with linecache like all generated code; the next level
is forward mode over it.  These functions are written as source text: they
are tiny, and in the subset the transformer reads, so every level can be
transformed once more.  So they are written in the source language (as the
NumPy target spells it), whatever the target of the code that runs: the
transformer reads them back.
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

from ..core import ir, language, runtime
from ..core.kinds import Array, Constant
from ..frontend.snapshot import Snapshot
from ..targets.emit import Emitted, Namespace
from ..targets.target import NUMPY
from .cache import compile_module
from .pipeline import Built, Kinds, build_forward, build_split, leaf_kinds


def _compiled(built: Built) -> Callable:
    """The compiled function of a level built to be called (``compile_it``)."""
    if built.function is None:
        raise ValueError("a derivative level built without compiling it cannot be called")
    return built.function


def _compile_text(source: str, name: str, names: dict, origin: str, spelled: Optional[Namespace] = None
                  ) -> Callable:
    """Compile a level function; ``spelled``: the namespace its source-language ops were spelled in."""
    namespace = Namespace(NUMPY, globals={**(spelled.globals if spelled is not None else {}), **names})
    return compile_module(Emitted(source, namespace, name), origin)[name]


def build_gradient_only(fn: Callable, adjoint: Built, params: list[str], wrt: tuple[str, ...],
                        wrap_single: bool, lost: Optional[dict[str, tuple]] = None, has_aux: bool = False) -> Built:
    """``gradient_<f>(params)``: the gradient of ``adjoint``, compiled code that returns no value
    (``build_reverse`` without ``with_value``; with ``has_aux``, the aux's leaves beside the gradient),
    as a plain function (level 1).  ``lost``: for a
    parameter the gradient is not taken by, where a rule in ``fn`` would lose its derivative
    (``lost_outside``); it is marked (``runtime.derivative_lost_by``) for forward mode over this."""
    taken = set(params) | set(NUMPY.roots()) | {"derivative_lost_by"}
    adjoint_function = _compiled(adjoint)
    callee, aux, gradient = (ir.fresh_name(n, taken) for n in (adjoint_function.__name__, "aux", "gradient"))
    name = ir.fresh_name(f"gradient_{fn.__name__}" if fn.__name__.isidentifier() else "gradient_lambda_", taken)
    result = f"({gradient},)" if wrap_single else gradient
    marks = "".join(f"    derivative_lost_by({p}, {function!r}, {input_name!r}, {filename!r}, {line!r})\n"
                    for p, (function, input_name, filename, line) in (lost or {}).items())
    bound = f"{aux}, {gradient}" if has_aux else gradient
    source = (f"def {name}({', '.join(params)}):\n"
              f'    """d {fn.__name__} / d ({", ".join(wrt)}), as a plain function."""\n'
              f"{marks}"
              f"    {bound} = {callee}({', '.join(params)})\n"
              f"    return {result}\n")
    origin = f"{fn.__name__}, gradient"
    names = {callee: adjoint_function, "derivative_lost_by": runtime.derivative_lost_by}
    return Built(source, _compile_text(source, name, names, origin), adjoint.snapshot)


def lost_outside(fn: Callable, kinds: Kinds, params: list[str], wrt: Sequence[str]) -> dict[str, tuple]:
    """For the gradient of ``fn`` by ``wrt`` (``params``: the generated code's, a container's leaves
    in its place): the parameters outside ``wrt`` from which a float would reach a rule input without
    a derivative, with where (``lost_derivatives.lost_derivative_parameters``, of ``fn``'s split adjoint).
    Forward mode over the gradient by one of them would lose that derivative: ``build_gradient_only``
    marks them.  Empty (and nothing built) where every parameter outside ``wrt`` is a string or None."""
    flat = leaf_kinds(kinds)
    outside = [i for i, (p, k) in enumerate(zip(params, flat))
               if p not in wrt and not isinstance(k, Constant)]
    if not outside:
        return {}
    lost = build_split(fn, kinds).lost
    return {params[i]: lost[i] for i in outside if i in lost}


def build_derivative_of(inner: Built, params: list[str], kinds: Kinds, wrt: tuple[str, ...],
                        several: bool) -> Built:
    """The derivative of the scalar function ``inner.function`` by ``wrt``, as a plain function.

    Forward mode: one ``jvp`` per number in ``wrt``, with a unit tangent;
    an array argument is walked element by element.
    """
    inner_function = _compiled(inner)
    tangent = build_forward(inner_function, wrt, kinds)
    tangent_function = _compiled(tangent)
    by_param = dict(zip(params, kinds))
    taken = set(params) | set(NUMPY.roots()) | {"range"}
    jvp_name = ir.fresh_name(tangent_function.__name__, taken)
    name = ir.fresh_name(f"derivative_{inner_function.__name__}", taken)
    k, unit = ir.fresh_name("k", taken), ir.fresh_name("unit", taken)
    spelled = Namespace(NUMPY, avoid=set(params))
    reshape, shape = spelled.spelling(language.reshape), spelled.spelling(language.shape)
    zeros, size = spelled.spelling(language.zeros), spelled.spelling(language.size)
    lines = [f"def {name}({', '.join(params)}):"]
    results = []
    for w in wrt:
        is_array = isinstance(by_param.get(w), Array)
        tangents = []
        for other in wrt:
            if other == w:
                tangents.append(f"{reshape}({unit}, {shape}({w}))" if is_array else "1.0")
            else:
                tangents.append(f"{zeros}({shape}({other}))" if isinstance(by_param.get(other), Array)
                                else "0.0")
        call = f"{jvp_name}({', '.join(params + tangents)})[1]"
        d_w = ir.fresh_name(f"d_{w}", taken)
        if is_array:
            lines += [f"    {d_w} = {zeros}({size}({w}))",
                      f"    for {k} in range({size}({w})):",
                      f"        {unit} = {zeros}({size}({w}))",
                      f"        {unit}[{k}] = 1.0",
                      f"        {d_w}[{k}] = {call}",
                      f"    {d_w} = {reshape}({d_w}, {shape}({w}))"]
        else:
            lines.append(f"    {d_w} = {call}")
        results.append(d_w)
    lines.append(f"    return ({', '.join(results)},)" if several else f"    return {results[0]}")
    source = "\n".join(lines) + "\n"
    function = _compile_text(source, name, {jvp_name: tangent_function}, f"{inner_function.__name__}, derivative",
                             spelled)
    snapshot = Snapshot()
    snapshot.include(inner.snapshot)  # the user's names, read by the first level
    snapshot.include(tangent.snapshot)
    return Built(tangent.source + "\n\n" + source, function, snapshot)
