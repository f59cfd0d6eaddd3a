"""How ``vjp``, ``jvp`` and the matrices bind positional primals to a function's parameters
(``forward_mode._bound_primals``): a plain ``def``'s are read from its code object, without building a
signature; the oracle is ``inspect.signature(fn).bind(...)`` with its defaults applied, on the same
primals, and the same refusals (a ``TypeError``) where they do not fit."""
import functools
import inspect

import numpy as np
import pytest

import s2s_ad
from s2s_ad.api.forward_mode import _bound_primals


def two_defaults(a, b, c=1.0, d=2.0):
    return a * b + c * d


def positional_only(a, /, b, c=3.0):
    return a + b * c


def starred(a, *rest):
    return a


def keyword_only(a, *, k=1.0):
    return a * k


def nothing():
    return 0.0


@functools.wraps(two_defaults)
def wrapper(*args):
    return two_defaults(*args)


def signed(a, b):
    return a * b


signed.__signature__ = inspect.signature(lambda a, b, c=5.0: None)


def by_inspect(fn, primals):
    signature = inspect.signature(fn)
    bound = signature.bind(*primals)
    bound.apply_defaults()
    return list(signature.parameters), tuple(bound.arguments.values())


@pytest.mark.parametrize("fn", [two_defaults, positional_only, starred, keyword_only, nothing, wrapper, signed],
                         ids=lambda fn: fn.__name__)
@pytest.mark.parametrize("count", range(6))
def test_binding_matches_inspect(fn, count):
    primals = tuple(float(i + 10) for i in range(count))
    try:
        expected = by_inspect(fn, primals)
    except TypeError:
        with pytest.raises(TypeError):
            _bound_primals(fn, primals)
        return
    assert _bound_primals(fn, primals) == expected


def test_a_default_filled_in_reaches_the_pullback_and_the_tangent():
    x, y = 0.7, -1.3
    value, pullback = s2s_ad.vjp(two_defaults, x, y, 4.0)
    assert value == two_defaults(x, y, 4.0)
    da, db, dc = pullback(1.0)
    assert (da, db, dc) == pytest.approx((y, x, 2.0), rel=1e-15)
    _, tangent = s2s_ad.jvp(two_defaults, (x, y), (1.0, 0.0))
    assert tangent == pytest.approx(y, rel=1e-15)
    step = 1e-6
    assert da == pytest.approx((two_defaults(x + step, y, 4.0) - two_defaults(x - step, y, 4.0)) / (2 * step),
                               rel=1e-8)


def test_primals_that_do_not_fit_are_refused_with_the_signature():
    with pytest.raises(TypeError, match=r"do not fit two_defaults\(a, b, c=1.0, d=2.0\)"):
        s2s_ad.vjp(two_defaults, 1.0)
    with pytest.raises(TypeError, match="do not fit"):
        s2s_ad.jvp(two_defaults, (1.0, 2.0, 3.0, 4.0, 5.0), (1.0,) * 5)
    assert np.isfinite(s2s_ad.vjp(two_defaults, 1.0, 2.0)[0])
