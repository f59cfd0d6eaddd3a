"""Under ``backend="numba"``, ``math``'s functions raise where Python's do (issue 31): outside their
domain ``ValueError("math domain error")``, past the floats' range ``OverflowError("math range
error")``, where Numba's own give nan or inf.  The oracle: Python running the user's function; and
inside the domain, the two backends agree with central differences."""
import warnings

import numpy as np
import pytest

import s2s_ad
from s2s_ad.core.errors import CompileFallbackWarning

import held_memory_functions as hm

pytest.importorskip("numba")

OUTSIDE = [(hm.root_of, 1.0), (hm.arccos_of, 1.5), (hm.exp_of, 1.0), (hm.log_of, 1.0), (hm.log_of, 0.5),
           (hm.log_base_two_of, 3.0), (hm.power_of, -1.0), (hm.power_overflowing, 10.0), (hm.atanh_of, 1.0),
           (hm.sine_of_an_infinity, 1.0), (hm.in_a_loop, 1.5)]
INSIDE = [(hm.root_of, 3.0), (hm.arccos_of, 0.3), (hm.exp_of, 0.1), (hm.log_of, 2.5), (hm.log_base_two_of, 7.0),
          (hm.power_of, 2.0), (hm.power_overflowing, 1.001), (hm.atanh_of, 0.5), (hm.in_a_loop, 2.5)]


def python_error(f, x):
    """The exception Python raises running ``f(x)`` (the oracle)."""
    try:
        f(x)
    except (ValueError, OverflowError) as exc:
        return exc
    raise AssertionError(f"{f.__name__}({x}) raised nothing in Python")


def compiled(derivative, x):
    """The machine code a call of ``derivative`` with ``x`` runs (not the Python fallback)."""
    args = derivative._bind((x,), {})
    return derivative._typed_entry(args, derivative._types_of(args))[0][0].compiled


def outcome(call):
    """What ``call()`` gives: its value, or the type and words of what it raised."""
    try:
        return call()
    except Exception as exc:
        return type(exc), str(exc)


@pytest.mark.parametrize("f, x", OUTSIDE, ids=lambda v: getattr(v, "__name__", str(v)))
def test_a_math_function_outside_its_domain_raises_compiled_as_in_python(f, x):
    expected = python_error(f, x)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)  # compiled, not run as Python
        derivative = s2s_ad.value_and_grad(f, backend="numba")
        with pytest.raises(type(expected), match=str(expected)):
            derivative(x)
        with pytest.raises(type(expected), match=str(expected)):
            compiled(derivative, x)(x)  # the machine code itself raises
        with pytest.raises(type(expected), match=str(expected)):
            s2s_ad.jvp(f, (x,), (1.0,), backend="numba")
        # grad alone computes no value (it may not call the function at all): as the Python backend
        assert outcome(lambda: s2s_ad.grad(f, backend="numba")(x)) == outcome(lambda: s2s_ad.grad(f)(x))


@pytest.mark.parametrize("f, x", INSIDE, ids=lambda v: getattr(v, "__name__", str(v)))
def test_inside_the_domain_both_backends_agree_with_differences(f, x):
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        value, gradient = s2s_ad.value_and_grad(f, backend="numba")(x)
        tangent = s2s_ad.jvp(f, (x,), (1.0,), backend="numba")[1]
    h = 1e-6 * max(1.0, abs(x))
    difference = (f(x + h) - f(x - h)) / (2 * h)
    assert value == pytest.approx(f(x), rel=1e-13)
    assert gradient == pytest.approx(difference, rel=1e-6)
    assert tangent == pytest.approx(gradient, rel=1e-13)
    assert s2s_ad.grad(f)(x) == pytest.approx(gradient, rel=1e-13)
