"""The public transformations that make a gradient function, and ``source``.

``grad`` and ``value_and_grad`` return a ``GradientFunction`` (``gradient.py``), usable as a
decorator; ``source`` prints the code a transformation generates, at any stage of the pipeline
(``driver.pass_manager``'s pass names, or the stages ``STAGES`` names).  ``jvp`` lives in
``forward_mode.py``, ``vjp`` in ``pullback.py``; ``s2s_ad`` itself hands all of them on.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Optional

from ..core.kinds import UNKNOWN
from ..driver.pipeline import STAGES, build_forward, build_reverse
from ..frontend.callables import made_by_s2s_ad
from ..driver.reach import whole_source
from ..targets.backends import target_of
from .auto_backend import choose_backend, headed
from .calling import _resolve_wrt, _TARGET, _user_facing, refuse_what_is_not_a_def, Wrt
from .gradient import _decorator_or_call, GradientFunction, _tangent_built, _without_prefix
from .forward_mode import _bound_primals

def grad(fn: Optional[Callable] = None, wrt: Wrt = 0, has_aux: bool = False, check: bool = False,
         backend: str = "python") -> Any:


    """The gradient of a scalar function: ``grad(f)(*args)`` is d f / d ``args[wrt]``.

    Reads ``fn``'s source and generates its reverse-mode derivative as Python, at the first
    call with each new kind of arguments (numbers, arrays and the pattern of their lengths,
    containers), and again where a name the code read has changed; other calls run the
    cached code.  Also a decorator: ``@grad`` or
    ``@grad(wrt=...)``.  The contract is in docs/api.md.

    Parameters
    ----------
    fn : callable, optional
        A function defined with ``def`` (or a lambda) whose source can be read, a bound
        method, a ``functools.partial``, or a gradient (``grad(grad(f))``: forward mode
        over it).  It must return a scalar.  Left out, ``grad`` returns a decorator.
    wrt : int, str or tuple of them, default 0
        The argument to differentiate by, by position or parameter name; a tuple
        makes the call return a tuple of gradients, one per item.
    has_aux : bool, default False
        ``fn`` returns ``(value, aux)``; the call then returns ``(gradient, aux)``,
        ``aux`` not differentiated (first derivatives only).
    check : bool, default False
        Every call also runs the dot-product test (forward mode along a random
        direction against the gradient).  The environment variable ``S2S_AD_CHECK=1``,
        read when ``grad`` is called, does the same.
    backend : {"python", "numba", "auto"}, default "python"
        ``"numba"`` compiles the generated code with ``numba.njit`` (the optional extra
        ``s2s_ad[numba]``); where Numba cannot compile it, the same code runs as Python
        and a ``CompileFallbackWarning`` names what Numba refused and the user's line.
        ``"auto"``: ``"numba"`` where the function loops over elements, else ``"python"``
        (``df.backend_chosen`` says which and why; ``api/auto_backend.py``).

    Returns
    -------
    GradientFunction
        Called with ``fn``'s arguments (defaults and keywords included), it returns the
        gradient, of the argument's type, shape and precision (a container of the same
        structure for a container), or a tuple of them for a tuple ``wrt``.  Its
        ``source`` and ``source_for(*args)`` give the generated code.

    Raises
    ------
    TransformError
        At a call, where ``fn`` (or a helper it calls) uses what cannot be
        differentiated; the message names file, line, column and what to write instead.
    TypeError
        ``fn`` is not callable; a call's result is not a scalar (use ``vjp`` or
        ``jacobian``); ``wrt`` names a string or ``None`` argument.
    ValueError
        ``wrt`` names no parameter of ``fn``.
    GradientCheckError
        With ``check``: forward and reverse mode disagree at a call.

    """
    return _decorator_or_call(fn, wrt, with_value=False, has_aux=has_aux, check=check, backend=backend)


def value_and_grad(fn: Optional[Callable] = None, wrt: Wrt = 0, has_aux: bool = False, check: bool = False,
                   backend: str = "python") -> Any:
    """The value and the gradient of a scalar function in one call (docs/api.md).

    Parameters
    ----------
    fn, wrt, has_aux, check, backend
        As for ``grad``.

    Returns
    -------
    GradientFunction
        Called with ``fn``'s arguments, it returns ``(fn(*args), gradient)``; with
        ``has_aux``, ``((value, aux), gradient)``.

    Raises
    ------
    TransformError, TypeError, ValueError, GradientCheckError
        As for ``grad``.
    """
    return _decorator_or_call(fn, wrt, with_value=True, has_aux=has_aux, check=check, backend=backend)


@_user_facing
def source(fn: Callable, wrt: Wrt = 0, mode: str = "reverse", stage: str = "optimized",
           args: Optional[tuple] = None, backend: str = "python") -> str:
    """The code s2s_ad generates for ``fn``, as Python source; nothing is run (docs/api.md).

    Parameters
    ----------
    fn : callable
        A function whose source can be read; or a gradient (``grad(f)``) in forward mode,
        for the Hessian-vector product's code.
    wrt : int, str or tuple of them, default 0
        The arguments to differentiate by, as for ``grad``.
    mode : {"reverse", "forward"}, default "reverse"
        The gradient's code, or the tangent (``jvp``) code.
    stage : {"ssa", "facts", "adjoint", "optimized"} or a pass's name, default "optimized"
        The lowered three-address form; that form with what the analysis proved of each
        value (see ``factdump.py``); the derivative as generated; as run; or after the pass
        of the declared pipeline (``passes.py``) so named.
    args : tuple, optional
        Specialise the code for arguments like these (numbers or arrays, the pattern of
        the arrays' lengths), as a call would: the parameters they leave out take their
        defaults.  Left out, the generic code.
    backend : {"python", "numba", "auto"}, default "python"
        The code that backend runs (``"numba"``: a typed stack per tape slot, helpers inlined;
        nothing is compiled here).

    Returns
    -------
    str
        The source, with a header naming ``fn``, its file and line.

    Raises
    ------
    ValueError
        An unknown ``mode`` or ``stage``; ``wrt`` names no parameter.
    TransformError
        ``fn`` cannot be differentiated.
    """
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {', '.join(STAGES)}, not {stage!r}")
    if mode not in ("reverse", "forward"):
        raise ValueError(f"mode must be 'reverse' or 'forward', not {mode!r}")
    if isinstance(fn, GradientFunction):
        return _forward_over_gradient_source(fn, wrt, mode, stage, args)
    shown_by_itself = getattr(type(fn), "source_of_api_object", None)  # a Hessian, a Jacobian (matrices.py)
    if shown_by_itself is not None:
        return shown_by_itself(fn, args)
    _refuse_api_object(fn)
    refuse_what_is_not_a_def("source", fn)
    names, _ = _resolve_wrt(fn, wrt)
    n = len(inspect.signature(fn).parameters)
    kinds: tuple
    if args is None:
        kinds = (UNKNOWN,) * n
    else:  # bound as a call binds them: defaults filled in, a method's object first
        params, full = _bound_primals(fn, args)
        fn, params, full = _without_prefix(fn, params, full)
        kinds = _TARGET.argument_kinds(fn, full)
    build = build_reverse if mode == "reverse" else build_forward
    chosen = choose_backend(fn, backend, "grad" if mode == "reverse" else "jvp")  # (backend="auto": said first)
    target = target_of(chosen.backend, compiling=False)
    return headed(build(fn, names, kinds, stage=stage, compile_it=False, target=target).source, chosen)


def _refuse_api_object(fn: Any) -> None:
    """``source`` of something whose code is not what it is given: say what to pass instead."""
    module = getattr(fn, "__module__", None)
    if isinstance(module, str) and module.partition(".")[0] == "s2s_ad" or made_by_s2s_ad(fn):
        raise TypeError(f"source of {fn!r}, which is s2s_ad's own: pass the function you differentiate, "
                        "source(f, ...), or a gradient, source(grad(f), mode='forward'); a gradient's own code "
                        "is grad(f).source_for(*args), a Hessian's hessian(f).source_for(*args)")


def _forward_over_gradient_source(gradient: "GradientFunction", wrt: Wrt, mode: str, stage: str,
                                  args: Optional[tuple]) -> str:
    """``source`` of a gradient: forward mode over the plain function it generates (a Hessian-vector
    product), every generated module it runs; reverse over reverse is not done."""
    if mode != "forward":
        raise TypeError(f"source of {gradient!r} in reverse mode would be reverse over reverse, which s2s_ad "
                        "does not do: pass mode='forward' (forward over reverse, a Hessian-vector product), "
                        "or see grad(that gradient).source_for(*args) or hessian(f).source_for(*args)")
    names, _ = _resolve_wrt(gradient, wrt)
    n = len(gradient._signature.parameters)
    kinds = (UNKNOWN,) * n if args is None else _TARGET.argument_kinds(gradient.fn, gradient._bind(tuple(args), {}))
    if stage != "optimized":
        plain = gradient.function_for(kinds).function
        return build_forward(plain, names, kinds, stage=stage, compile_it=False).source
    return whole_source(_tangent_built(gradient, names, kinds).function)


# -- forward mode, vjp and Jacobians ------------------------------------------
