"""Rules for ``scipy.special``, registered once the user imports it: SciPy is an
optional extra, and where it is not used it is not imported either.

``digamma`` is ``psi``; its derivative is ``polygamma(1, x)``, whose own
derivative is ``polygamma(2, x)``, and so on to any order.  Each rule's body
calls functions that have rules themselves (a Bessel function's derivative is
Bessel functions of the neighbouring orders), so the code it generates is
differentiated again (Hessians).

Some inputs have no derivative here, as in autograd: the order of a Bessel
function or of ``polygamma``, the dimension of ``multigammaln``, and the shape
parameters of the regularised incomplete gamma and beta functions
(``gammainc(a, x)``, ``betainc(a, b, x)``: by ``x`` only, their derivatives by
the parameters having no closed form).  A call where such an input depends on
the differentiated inputs is refused, naming it.  ``jn`` is ``jv`` in SciPy.
"""
import numpy as np

from s2s_ad.rules import adjoint, nondifferentiable, tangent, when_imported
from s2s_ad.core.runtime import unbroadcast
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

    # -- gamma and beta functions ---------------------------------------------------------

    @adjoint(sp.gamma, elementwise=True, domain=(0.5, 3.0))
    def gamma(out, x, d_out):
        d_x = d_out * out * sp.psi(x)

    @adjoint(sp.rgamma, elementwise=True, domain=(0.5, 3.0))
    def rgamma(out, x, d_out):
        d_x = -d_out * out * sp.psi(x)  # 1 / gamma(x)

    @adjoint(sp.loggamma, elementwise=True, domain=(0.5, 3.0))
    def loggamma(out, x, d_out):
        d_x = d_out * sp.psi(x)  # real x > 0 (on negative x SciPy gives NaN for a real argument)

    nondifferentiable(sp.gammasgn, elementwise=True)  # piecewise constant: the sign of gamma(x)

    @adjoint(sp.multigammaln, elementwise=True, domain=(2.0, 4.0),
             examples=({"a": (), "d": 3}, {"a": (4,), "d": 2}, {"a": (2, 3), "d": 1}))
    def multigammaln(out, a, d, d_out):
        d_a = d_out * np.sum(sp.psi(np.expand_dims(a, -1) - np.arange(d) / 2.0), axis=-1)  # d, the dimension: no derivative

    @adjoint(sp.beta, elementwise=True, domain=(0.5, 3.0))
    def beta(out, a, b, d_out):
        both = sp.psi(a + b)
        d_a = d_out * out * (sp.psi(a) - both)
        d_b = d_out * out * (sp.psi(b) - both)

    # The regularised incomplete gamma and beta functions, by x only: their derivatives by the shape
    # parameters have no closed form (a call where one depends on the differentiated inputs is refused).
    @adjoint(sp.gammainc, elementwise=True, domain=(0.5, 3.0),
             examples=({"a": 1.7, "x": ()}, {"a": 0.6, "x": (3,)}, {"a": np.array([0.8, 2.0, 4.5]), "x": (2, 3)}))
    def gammainc(out, a, x, d_out):
        d_x = d_out * np.exp(-x - sp.gammaln(a)) * x ** (a - 1.0)

    @adjoint(sp.gammaincc, elementwise=True, domain=(0.5, 3.0),
             examples=({"a": 1.7, "x": ()}, {"a": 0.6, "x": (3,)}, {"a": np.array([0.8, 2.0, 4.5]), "x": (2, 3)}))
    def gammaincc(out, a, x, d_out):
        d_x = -d_out * np.exp(-x - sp.gammaln(a)) * x ** (a - 1.0)

    @adjoint(sp.betainc, elementwise=True, domain=(0.2, 0.8),
             examples=({"a": 1.5, "b": 2.5, "x": ()}, {"a": 0.7, "b": 3.0, "x": (3,)},
                       {"a": np.array([0.9, 2.0, 4.0]), "b": 1.2, "x": (2, 3)}))
    def betainc(out, a, b, x, d_out):
        d_x = d_out * x ** (a - 1.0) * (1.0 - x) ** (b - 1.0) / sp.beta(a, b)

    # -- error functions and the normal distribution's ------------------------------------

    @adjoint(sp.erfinv, elementwise=True, domain=(-0.8, 0.8))
    def erfinv(out, y, d_out):
        d_y = d_out * (np.sqrt(np.pi) / 2.0) * np.exp(out * out)

    @adjoint(sp.erfcinv, elementwise=True, domain=(0.2, 1.8))
    def erfcinv(out, y, d_out):
        d_y = -d_out * (np.sqrt(np.pi) / 2.0) * np.exp(out * out)

    @adjoint(sp.erfcx, elementwise=True, domain=(-1.5, 1.5))
    def erfcx(out, x, d_out):
        d_x = d_out * (2.0 * x * out - 2.0 / np.sqrt(np.pi))

    @adjoint(sp.dawsn, elementwise=True, domain=(-1.5, 1.5))
    def dawsn(out, x, d_out):
        d_x = d_out * (1.0 - 2.0 * x * out)

    @adjoint(sp.ndtr, elementwise=True, domain=(-2.0, 2.0))
    def ndtr(out, x, d_out):
        d_x = d_out * np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi)

    @adjoint(sp.log_ndtr, elementwise=True, domain=(-3.0, 3.0))
    def log_ndtr(out, x, d_out):
        d_x = d_out * np.exp(-0.5 * x * x - out) / np.sqrt(2.0 * np.pi)

    @adjoint(sp.ndtri, elementwise=True, domain=(0.1, 0.9))
    def ndtri(out, y, d_out):
        d_y = d_out * np.sqrt(2.0 * np.pi) * np.exp(0.5 * out * out)

    # -- Bessel functions, by x only: by the order v, only where it is an integer (jn, yn) would
    # there be nothing to lose, and a float order that depends on the differentiated inputs is
    # refused (SciPy's derivatives in the order have no closed form) --------------------------

    @adjoint(sp.j0, elementwise=True, domain=(0.5, 4.0))
    def j0(out, x, d_out):
        d_x = -d_out * sp.j1(x)

    @adjoint(sp.j1, elementwise=True, domain=(0.5, 4.0))
    def j1(out, x, d_out):
        d_x = d_out * (sp.j0(x) - sp.jv(2.0, x)) / 2.0

    @adjoint(sp.jv, elementwise=True, domain=(0.5, 4.0),  # (sp.jn is sp.jv)
             examples=({"v": 1.5, "x": ()}, {"v": 0.0, "x": (3,)}, {"v": np.array([0.5, 1.0, 3.0]), "x": (2, 3)},
                       {"v": 2, "x": (3,)}))
    def jv(out, v, x, d_out):
        d_x = d_out * (sp.jv(v - 1.0, x) - sp.jv(v + 1.0, x)) / 2.0

    @adjoint(sp.y0, elementwise=True, domain=(0.5, 4.0))
    def y0(out, x, d_out):
        d_x = -d_out * sp.y1(x)

    @adjoint(sp.y1, elementwise=True, domain=(0.5, 4.0))
    def y1(out, x, d_out):
        d_x = d_out * (sp.y0(x) - sp.yv(2.0, x)) / 2.0

    @adjoint(sp.yv, elementwise=True, domain=(0.5, 4.0),
             examples=({"v": 1.5, "x": ()}, {"v": 0.0, "x": (3,)}, {"v": np.array([0.5, 1.0, 3.0]), "x": (2, 3)}))
    def yv(out, v, x, d_out):
        d_x = d_out * (sp.yv(v - 1.0, x) - sp.yv(v + 1.0, x)) / 2.0

    @adjoint(sp.yn, elementwise=True, domain=(0.5, 4.0),
             examples=({"n": 1, "x": ()}, {"n": 0, "x": (3,)}, {"n": np.array([0, 2, 3]), "x": (2, 3)}))
    def yn(out, n, x, d_out):
        d_x = d_out * (sp.yv(n - 1.0, x) - sp.yv(n + 1.0, x)) / 2.0

    @adjoint(sp.i0, elementwise=True, domain=(-2.0, 2.0))
    def i0(out, x, d_out):
        d_x = d_out * sp.i1(x)

    @adjoint(sp.i1, elementwise=True, domain=(-2.0, 2.0))
    def i1(out, x, d_out):
        d_x = d_out * (sp.i0(x) + sp.iv(2.0, x)) / 2.0

    @adjoint(sp.iv, elementwise=True, domain=(0.3, 3.0),
             examples=({"v": 1.5, "x": ()}, {"v": 0.0, "x": (3,)}, {"v": np.array([0.5, 1.0, 3.0]), "x": (2, 3)},
                       {"v": 2, "x": (3,)}))
    def iv(out, v, x, d_out):
        d_x = d_out * (sp.iv(v - 1.0, x) + sp.iv(v + 1.0, x)) / 2.0

    # The exponentially scaled ones, e**-|x| iv(v, x): the product rule, with d|x|/dx = sign(x).
    @adjoint(sp.i0e, elementwise=True, domain=(0.3, 3.0))
    def i0e(out, x, d_out):
        d_x = d_out * (sp.i1e(x) - np.sign(x) * out)

    @adjoint(sp.i1e, elementwise=True, domain=(0.3, 3.0))
    def i1e(out, x, d_out):
        d_x = d_out * ((sp.i0e(x) + sp.ive(2.0, x)) / 2.0 - np.sign(x) * out)

    @adjoint(sp.ive, elementwise=True, domain=(0.3, 3.0),
             examples=({"v": 1.5, "x": ()}, {"v": 0.0, "x": (3,)}, {"v": np.array([0.5, 1.0, 3.0]), "x": (2, 3)}))
    def ive(out, v, x, d_out):
        d_x = d_out * ((sp.ive(v - 1.0, x) + sp.ive(v + 1.0, x)) / 2.0 - np.sign(x) * out)

    @adjoint(sp.k0, elementwise=True, domain=(0.3, 3.0))
    def k0(out, x, d_out):
        d_x = -d_out * sp.k1(x)

    @adjoint(sp.k1, elementwise=True, domain=(0.3, 3.0))
    def k1(out, x, d_out):
        d_x = -d_out * (sp.k0(x) + sp.kv(2.0, x)) / 2.0

    @adjoint(sp.kv, elementwise=True, domain=(0.3, 3.0),
             examples=({"v": 1.5, "x": ()}, {"v": 0.0, "x": (3,)}, {"v": np.array([0.5, 1.0, 3.0]), "x": (2, 3)}))
    def kv(out, v, x, d_out):
        d_x = -d_out * (sp.kv(v - 1.0, x) + sp.kv(v + 1.0, x)) / 2.0

    @adjoint(sp.kn, elementwise=True, domain=(0.3, 3.0),
             examples=({"n": 1, "x": ()}, {"n": 0, "x": (3,)}, {"n": np.array([0, 2, 3]), "x": (2, 3)}))
    def kn(out, n, x, d_out):
        d_x = -d_out * (sp.kv(n - 1.0, x) + sp.kv(n + 1.0, x)) / 2.0

    # e**x kv(v, x), for x > 0
    @adjoint(sp.k0e, elementwise=True, domain=(0.3, 3.0))
    def k0e(out, x, d_out):
        d_x = d_out * (out - sp.k1e(x))

    @adjoint(sp.k1e, elementwise=True, domain=(0.3, 3.0))
    def k1e(out, x, d_out):
        d_x = d_out * (out - (sp.k0e(x) + sp.kve(2.0, x)) / 2.0)

    @adjoint(sp.kve, elementwise=True, domain=(0.3, 3.0),
             examples=({"v": 1.5, "x": ()}, {"v": 0.0, "x": (3,)}, {"v": np.array([0.5, 1.0, 3.0]), "x": (2, 3)}))
    def kve(out, v, x, d_out):
        d_x = d_out * (out - (sp.kve(v - 1.0, x) + sp.kve(v + 1.0, x)) / 2.0)

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
