"""Rules for ``scipy.integrate.odeint``, registered once the user imports ``scipy.integrate`` (SciPy is an
optional extra, as in ``scipy_special.py``).

``ys = odeint(func, y0, t, args)`` solves dy/dt = f(y, t, *args) (``f(t, y, *args)`` with ``tfirst=True``)
and returns y at the times ``t`` (the value is SciPy's own call).  Its derivatives are those of the ODE,
by forward sensitivities, not by differentiating the solver's steps: with the parameters p (every item
of ``args``, flattened) held as constant states, u = (y, p), the sensitivity S = dy(t)/d(y0, p), n x m
(m = n + size of p), solves dS/dt = f_y S + [0 | f_p] from S(0) = [I | 0], integrated by SciPy's
``odeint`` beside y with the call's own ``rtol``, ``atol`` and ``mxstep`` (``ode_sensitivity``).  Then
forward mode is S v (``ode_push``) and reverse mode g^T S summed over the times (``ode_pull_y0``,
``ode_pull_args``).  The Jacobian f_u comes from s2s_ad itself, made from the dynamics' source
(``rules.function_derivatives``).  For a Hessian (forward over reverse), S's tangent along v is T v,
T = d^2 y / d(y0, p)^2, which solves d(Tv)/dt = f_y Tv + (H_i q)_i [S; 0 I] with q = [S; 0 I] v and
H_i the Hessian of the i-th component of f by u (``ode_sensitivity_jvp``; each H_i q one forward-
over-reverse pass of s2s_ad over the dynamics).  The times ``t`` get no derivative (a varied ``t`` is
refused).  The derivatives' accuracy is the solver's: the sensitivities are integrated to the same
tolerances as y (docs/rules.md gives measured errors).
"""
import warnings
from typing import Any, Callable

import numpy as np

from s2s_ad.rules import adjoint, declare, nondifferentiable, tangent, when_imported
from s2s_ad.rules import function_derivatives

integrate: Any = None  # scipy.integrate, once imported (see _register)


def odeint_refusal(Dfun: Any = None, full_output: Any = 0) -> "str | None":
    """Why a call of ``scipy.integrate.odeint`` is not differentiated: ``full_output=True`` returns a
    dict of the solver's counters beside y; ``Dfun`` is not needed (s2s_ad differentiates the dynamics)."""
    if full_output:
        return ("scipy.integrate.odeint(..., full_output=True) returns the solver's counters, which carry no "
                "derivative; differentiate a call without full_output (call it again apart for the counters)")
    if Dfun is not None:
        return ("scipy.integrate.odeint(..., Dfun=...) is not differentiated: s2s_ad computes the Jacobian of the "
                "dynamics itself from their source; drop Dfun")
    return None


def _items(args: Any) -> tuple:
    """``args`` as the tuple SciPy passes on (a tuple already; ``()`` for None)."""
    return () if args is None else tuple(args)


def _varied(item: Any) -> bool:
    """Whether an item of ``args`` is a parameter (floats); integers and the rest are held constant."""
    return bool(np.issubdtype(np.asarray(item).dtype, np.floating))


def _sizes(y0: Any, args: Any) -> tuple:
    """(n, m): the number of states and of states and parameters together."""
    n = int(np.size(y0))
    return n, n + sum(int(np.size(a)) for a in _items(args) if _varied(a))


def _call(func: Callable, y: Any, s: Any, items: tuple, tfirst: Any) -> tuple:
    """The arguments of the dynamics at (y, s), and the position of y among them."""
    return ((s, y) + items, 1) if tfirst else ((y, s) + items, 0)


def _positions(where: int, items: tuple) -> tuple:
    """The positions of y and of each item of ``args`` among the dynamics' arguments."""
    return (where,) + tuple(2 + i for i, item in enumerate(items) if _varied(item))


def _jacobian(func: Callable, y: Any, s: Any, items: tuple, tfirst: Any) -> Any:
    """f_u at (y, s): n x m, the columns of y then those of each item of ``args`` flattened."""
    call, where = _call(func, y, s, items, tfirst)
    blocks = function_derivatives.jacobian(func, _positions(where, items))(*call)
    n = np.size(y)
    return np.concatenate([np.reshape(np.asarray(b, dtype=float), (n, -1)) for b in blocks], axis=1)


def _full(sens: Any, n: int, m: int) -> Any:
    """du/du0 of u = (y, p): S with the parameters' rows [0 | I] below."""
    return np.concatenate([sens, np.eye(m - n, m, n)], axis=0)


def _solve(rhs: Callable, z0: Any, t: Any, rtol: Any, atol: Any, mxstep: Any) -> Any:
    """The sensitivity system integrated; where SciPy's solver gives up (it warns and returns what it had),
    an error rather than a wrong derivative."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.ODEintWarning)
        found, info = integrate.odeint(rhs, z0, t, rtol=rtol, atol=atol, mxstep=mxstep, full_output=True)
    if info["message"] != "Integration successful.":
        raise FloatingPointError(f"scipy.integrate.odeint could not integrate the derivatives of the ODE beside it "
                                 f"({info['message'].rstrip('.')}); give a larger mxstep=, or other rtol= and atol=")
    return found


def ode_sensitivity(func: Callable, y0: Any, t: Any, args: Any = (), rtol: Any = None, atol: Any = None,
                    tfirst: Any = False, mxstep: Any = 0) -> Any:
    """S = d y(t_k) / d(y0, p) at each time: (len(t), n, m), integrated beside y (module docstring)."""
    items = _items(args)
    n, m = _sizes(y0, args)

    def rhs(z: Any, s: Any) -> Any:
        y = z[:n]
        sens = np.reshape(z[n:], (n, m))
        jac = _jacobian(func, y, s, items, tfirst)
        call, _ = _call(func, y, s, items, tfirst)
        return np.concatenate([np.ravel(func(*call)), np.ravel(jac @ _full(sens, n, m))])

    z0 = np.concatenate([np.ravel(np.asarray(y0, dtype=float)), np.ravel(np.eye(n, m))])
    return np.reshape(_solve(rhs, z0, t, rtol, atol, mxstep)[:, n:], (len(t), n, m))


def _direction(y0: Any, args: Any, t_y0: Any, t_args: Any) -> Any:
    """The tangents of y0 and of the items of ``args`` as one vector of m (a missing one: zeros)."""
    pieces = [np.ravel(np.broadcast_to(t_y0, np.shape(y0)))]
    items = _items(args)
    given = _items(t_args) if isinstance(t_args, (tuple, list)) else (t_args,) * len(items)
    for item, moved in zip(items, given):
        if _varied(item):
            pieces.append(np.ravel(np.broadcast_to(moved, np.shape(item))))
    return np.concatenate(pieces).astype(float)


def ode_sensitivity_jvp(func: Callable, y0: Any, t: Any, args: Any, rtol: Any, atol: Any, tfirst: Any, mxstep: Any,
                        t_y0: Any, t_args: Any) -> Any:
    """The tangent of ``ode_sensitivity`` as y0 and ``args`` move along their tangents: T v (module docstring),
    integrated beside y and S."""
    items = _items(args)
    n, m = _sizes(y0, args)
    v = _direction(y0, args, t_y0, t_args)

    def rhs(z: Any, s: Any) -> Any:
        y = z[:n]
        sens = np.reshape(z[n:n + n * m], (n, m))
        moved = np.reshape(z[n + n * m:], (n, m))
        call, where = _call(func, y, s, items, tfirst)
        jac = _jacobian(func, y, s, items, tfirst)
        full = _full(sens, n, m)
        q = full @ v
        directions, start = [], 0
        for position in _positions(where, items):
            size = int(np.size(call[position]))
            directions.append(np.reshape(q[start:start + size], np.shape(call[position])))
            start += size
        rows = function_derivatives.hessian_vector(func, _positions(where, items))
        second = np.stack([np.concatenate([np.ravel(b) for b in rows(np.eye(n)[i], call, tuple(directions))])
                           for i in range(n)])
        return np.concatenate([np.ravel(func(*call)), np.ravel(jac @ full),
                               np.ravel(jac[:, :n] @ moved + second @ full)])

    z0 = np.concatenate([np.ravel(np.asarray(y0, dtype=float)), np.ravel(np.eye(n, m)), np.zeros(n * m)])
    return np.reshape(_solve(rhs, z0, t, rtol, atol, mxstep)[:, n + n * m:], (len(t), n, m))


def _is_missing(value: Any) -> bool:
    return isinstance(value, (int, float)) and value == 0


def _pulled(sens: Any, g: Any, m: int) -> Any:
    """g^T S summed over the times: one vector of m (zeros where either is a missing tangent, 0)."""
    if _is_missing(sens) or _is_missing(g):
        return np.zeros(m)
    return np.einsum("kia,ki->a", sens, np.reshape(g, np.shape(sens)[:2]))


def ode_pull_y0(sens: Any, g: Any, y0: Any) -> Any:
    """The adjoint of y0, given g, that of ``odeint``'s result."""
    n = int(np.size(y0))
    return np.reshape(_pulled(sens, g, n)[:n], np.shape(y0))


def ode_pull_args(sens: Any, g: Any, y0: Any, args: Any) -> tuple:
    """The adjoints of the items of ``args`` (a tuple, each piece shaped like its item)."""
    n, m = _sizes(y0, args)
    flat = _pulled(sens, g, m)
    pieces, start = [], n
    for item in _items(args):
        size = int(np.size(item)) if _varied(item) else 0
        piece = np.reshape(flat[start:start + size], np.shape(item)) if size else np.zeros(np.shape(item))
        pieces.append(float(piece) if not isinstance(item, np.ndarray) else piece)
        start += size
    return tuple(pieces)


def ode_push(sens: Any, y0: Any, args: Any, dy0: Any, dargs: Any, like: Any) -> Any:
    """The tangent of ``odeint``'s result ``like`` as y0 and ``args`` move along dy0 and dargs: S v."""
    if _is_missing(sens):
        return np.zeros(np.shape(like))
    return np.reshape(np.einsum("kia,a->ki", sens, _direction(y0, args, dy0, dargs)), np.shape(like))


def ode_pull_args_jvp(sens: Any, t_sens: Any, g: Any, t_g: Any, y0: Any, args: Any) -> tuple:
    """The tangent of ``ode_pull_args`` (bilinear in S and g; a tuple, since tuples do not add elementwise)."""
    return tuple(a + b for a, b in zip(ode_pull_args(t_sens, g, y0, args), ode_pull_args(sens, t_g, y0, args)))


nondifferentiable(odeint_refusal)
declare(ode_sensitivity, ode_sensitivity_jvp, takes_functions=True)
declare(ode_pull_y0, ode_push, numeric=True)
declare(ode_pull_args, ode_pull_args_jvp, returns_sequence=True)
declare(ode_sensitivity_jvp, refused="s2s_ad differentiates scipy.integrate.odeint to second order only (grad, jvp, "
        "hessian); for a third derivative integrate the ODE by steps written in NumPy")


def _decay(y, t, k):  # (the rules' examples: linear decay, y0 exp(-k t))
    return -k * y


def _rotation(y, t, w):  # (dy0 = w y1, dy1 = -w y0 - 0.1 y1 y1)
    return np.array([w * y[1], -w * y[0] - 0.1 * y[1] * y[1]])


_TIMES = np.linspace(0.0, 1.0, 4)
_TIGHT = {"rtol": 1e-11, "atol": 1e-11}
_ODES = ({"func": _decay, "y0": (3,), "t": _TIMES, "args": (0.7,), **_TIGHT},
         {"func": _rotation, "y0": (2,), "t": _TIMES, "args": (1.3,), **_TIGHT},
         {"func": _rotation, "y0": (2,), "t": _TIMES, "args": (1.3,), "tfirst": False, **_TIGHT})
_SENSITIVITIES = ({"func": _rotation, "y0": (2,), "t": _TIMES, "args": (1.3,), **_TIGHT},)


def _register(module: Any) -> None:
    """Declare the rules below, given ``scipy.integrate``."""
    global integrate
    integrate = module  # the name the helpers use

    @adjoint(integrate.odeint, refused_arguments=odeint_refusal, takes_functions=True, examples=_ODES)
    def odeint_rule(out, func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None, rtol=None,
                    atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0, mxhnil=0, mxordn=12,
                    mxords=5, printmessg=0, tfirst=False, *, d_out):
        sens = ode_sensitivity(func, y0, t, args, rtol, atol, tfirst, mxstep)
        d_y0 = ode_pull_y0(sens, d_out, y0)
        d_args = ode_pull_args(sens, d_out, y0, args)

    @tangent(integrate.odeint)
    def odeint_tangent(out, func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None, rtol=None,
                       atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0, mxhnil=0, mxordn=12,
                       mxords=5, printmessg=0, tfirst=False, *, t_y0, t_args):
        sens = ode_sensitivity(func, y0, t, args, rtol, atol, tfirst, mxstep)
        t_out = ode_push(sens, y0, args, t_y0, t_args, out)

    # the helpers' tangents, for Hessians (forward mode over the reverse code) and jvp over jvp
    @tangent(ode_sensitivity, examples=_SENSITIVITIES)
    def ode_sensitivity_rule(out, func, y0, t, args=(), rtol=None, atol=None, tfirst=False, mxstep=0, *, t_y0, t_args):
        t_out = ode_sensitivity_jvp(func, y0, t, args, rtol, atol, tfirst, mxstep, t_y0, t_args)

    @tangent(ode_pull_y0, examples=({"sens": (4, 2, 3), "g": (4, 2), "y0": np.zeros(2)},))
    def ode_pull_y0_rule(out, sens, g, y0, *, t_sens, t_g):
        t_out = ode_pull_y0(t_sens, g, y0) + ode_pull_y0(sens, t_g, y0)

    @tangent(ode_pull_args, examples=({"sens": (4, 2, 5), "g": (4, 2), "y0": np.zeros(2), "args": (0.5, np.zeros(2))},))
    def ode_pull_args_rule(out, sens, g, y0, args, *, t_sens, t_g):
        t_out = ode_pull_args_jvp(sens, t_sens, g, t_g, y0, args)

    @tangent(ode_push, examples=({"sens": (4, 2, 3), "y0": np.zeros(2), "args": (0.5,), "dy0": (2,), "dargs": [()],
                                  "like": np.zeros((4, 2))},))
    def ode_push_rule(out, sens, y0, args, dy0, dargs, like, *, t_sens, t_dy0, t_dargs):
        t_out = ode_push(t_sens, y0, args, dy0, dargs, like) + ode_push(sens, y0, args, t_dy0, t_dargs, like)


when_imported("scipy.integrate", _register)
