"""Rules for ``scipy.special``, registered once the user imports it: SciPy is an
optional extra, and where it is not used it is not imported either.

``digamma`` is ``psi``; its derivative is ``polygamma(1, x)``, whose own
derivative is ``polygamma(2, x)``, and so on to any order.
"""
import numpy as np

from s2s_ad.rules import adjoint, tangent, when_imported
from s2s_ad.runtime import unbroadcast
from .numpy_reductions import expand_reduced

sp = None  # scipy.special, once imported (see _register)

_SIGN_AXES = ({"a": (4,)}, {"a": (2, 3), "axis": 1}, {"a": (2, 3), "axis": -2, "keepdims": True},
              {"a": (2, 3, 2), "axis": (0, 2)})


def weights_or_one(b):
    """``b``, or 1.0 where it is None (``logsumexp`` without weights)."""
    if b is None:
        return 1.0
    return b


def _register(special) -> None:
    """Declare the rules below, given ``scipy.special``."""
    global sp
    sp = special  # the name the rules' bodies use

    @adjoint(sp.gammaln, elementwise=True, domain=(0.5, 3.0))
    def gammaln(out, x, d_out):
        d_x = d_out * sp.psi(x)

    @adjoint(sp.psi, elementwise=True, domain=(0.5, 3.0))
    def digamma(out, x, d_out):
        d_x = d_out * sp.polygamma(1, x)  # trigamma

    @adjoint(sp.polygamma, elementwise=True, domain=(0.5, 3.0),
             examples=({"n": 1, "x": ()}, {"n": 1, "x": (3,)}, {"n": 2, "x": (2, 3)}))
    def polygamma(out, n, x, d_out):
        d_x = d_out * sp.polygamma(n + 1, x)  # n, the order, is an integer: no derivative

    @adjoint(sp.erf, elementwise=True, domain=(-1.5, 1.5))
    def erf(out, x, d_out):
        d_x = d_out * (2.0 / np.sqrt(np.pi)) * np.exp(-x * x)

    @adjoint(sp.erfc, elementwise=True, domain=(-1.5, 1.5))
    def erfc(out, x, d_out):
        d_x = d_out * (-2.0 / np.sqrt(np.pi)) * np.exp(-x * x)

    @adjoint(sp.expit, elementwise=True, domain=(-3.0, 3.0))
    def expit(out, x, d_out):
        d_x = d_out * out * (1.0 - out)

    @adjoint(sp.logit, elementwise=True, domain=(0.1, 0.9))
    def logit(out, x, d_out):
        d_x = d_out / (x * (1.0 - x))

    @adjoint(sp.xlogy, elementwise=True, domain=(0.2, 2.0))
    def xlogy(out, x, y, d_out):
        d_x = d_out * np.log(y)
        d_y = d_out * x / y

    @adjoint(sp.xlog1py, elementwise=True, domain=(0.2, 2.0))
    def xlog1py(out, x, y, d_out):
        d_x = d_out * np.log1p(y)
        d_y = d_out * x / (1.0 + y)

    @adjoint(sp.betaln, elementwise=True, domain=(0.5, 3.0))
    def betaln(out, a, b, d_out):
        both = sp.psi(a + b)
        d_a = d_out * (sp.psi(a) - both)
        d_b = d_out * (sp.psi(b) - both)

    @adjoint(sp.logsumexp, domain=(-1.0, 1.0), examples=_SIGN_AXES + (
        {"a": (2, 3), "b": (2, 3)}, {"a": (2, 3), "axis": 1, "b": (3,)}, {"a": (3,), "b": np.array([0.5, 2.0, 1.0])}))
    def logsumexp(out, a, axis=None, b=None, keepdims=False, *, d_out):
        shares = np.exp(a - expand_reduced(out, axis, keepdims))  # b * shares sums to 1 along axis
        spread = expand_reduced(d_out, axis, keepdims)
        d_a = unbroadcast(spread * shares * weights_or_one(b), a)
        d_b = unbroadcast(spread * shares, b)

    @adjoint(sp.softmax, domain=(-1.0, 1.0), examples=({"x": (4,)}, {"x": (2, 3), "axis": 1}, {"x": (2, 3), "axis": 0},
                                                         {"x": (2, 3, 2), "axis": (0, 2)}))
    def softmax(out, x, axis=None, *, d_out):
        d_x = out * (d_out - np.sum(d_out * out, axis=axis, keepdims=True))

    @adjoint(sp.log_softmax, domain=(-1.0, 1.0), examples=({"x": (4,)}, {"x": (2, 3), "axis": 1},
                                                             {"x": (2, 3), "axis": 0}))
    def log_softmax(out, x, axis=None, *, d_out):
        d_x = d_out - np.exp(out) * np.sum(d_out, axis=axis, keepdims=True)

    @tangent(sp.logsumexp)
    def logsumexp_tangent(out, a, axis=None, b=None, keepdims=False, *, t_a, t_b):
        shares = np.exp(a - expand_reduced(out, axis, keepdims))
        t_out = np.sum(shares * (weights_or_one(b) * t_a + t_b), axis=axis, keepdims=keepdims)

    @tangent(sp.softmax)
    def softmax_tangent(out, x, axis=None, *, t_x):
        t_out = out * (t_x - np.sum(out * t_x, axis=axis, keepdims=True))

    @tangent(sp.log_softmax)
    def log_softmax_tangent(out, x, axis=None, *, t_x):
        t_out = t_x - np.sum(np.exp(out) * t_x, axis=axis, keepdims=True)


when_imported("scipy.special", _register)
