"""Complex values are refused before anything runs: the rules are written for real values.

Before, a complex argument or a complex constant ran and gave numbers that are no derivative under
any convention: the gradient of sum(|x * (1 + 2j)|) by real x came out complex (1 + 2j each, where
it is sqrt(5)), and a complex product added into a real adjoint array lost its imaginary part
(the gradient of |sum(x) c| by x came out 1 where it is |c|).  Each case here was one of those or
a crash deep in the generated code; now each is a TransformError naming the value and the line.
"""
import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError

Z = 2.0 + 1.0j


def abs_of_scaled(x, c):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * c
    return np.abs(s)


def squared_modulus(z):
    return np.sum(np.abs(z) ** 2)


def literal(x):
    return np.sum(np.abs(x * (1 + 2j)))


def global_constant(x):
    return np.sum(np.abs(x * Z))


def builtin_complex(x):
    return np.abs(x * complex(1, 1))


def numpy_complex_type(x):
    return np.sum(np.abs(np.exp(np.complex128(1) * x)))


def dtype_keyword(x):
    return np.sum(np.abs(np.zeros(3, dtype=np.complex128) + x))


def dtype_string(x):
    return np.sum(np.abs(np.asarray(x, dtype="complex128")))


def astype_complex(x):
    return np.sum(np.abs(x.astype(complex)))


def positional_dtype(x):
    return np.sum(np.abs(np.zeros(3, complex) + x))


def is_complex_branch(x):
    if isinstance(x, complex):
        return 0.0
    return x * x


def fourier(x):
    return np.sum(np.abs(np.fft.fft(x)))


def in_a_dict(p):
    return np.sum(p["w"] * p["c"])


X = np.array([1.0, 2.0, 3.0])


def test_a_complex_argument_is_refused_naming_it():
    with pytest.raises(TransformError, match=r"argument c is the complex number \(1\+2j\)"):
        s2s_ad.grad(abs_of_scaled)(X, 1 + 2j)
    with pytest.raises(TransformError, match="argument z is a complex array"):
        s2s_ad.grad(squared_modulus)(X + 1j)
    with pytest.raises(TransformError, match="argument z is the complex number"):
        s2s_ad.grad(squared_modulus)(np.complex128(1 + 1j))
    with pytest.raises(TransformError, match="a value inside one of its arguments"):
        s2s_ad.grad(in_a_dict)({"w": X, "c": X * 1j})


def test_every_entry_point_refuses_a_complex_argument():
    for derivative in (s2s_ad.value_and_grad(squared_modulus), s2s_ad.hessian(squared_modulus),
                       s2s_ad.jacobian(squared_modulus)):
        with pytest.raises(TransformError, match="complex array"):
            derivative(X + 1j)
    with pytest.raises(TransformError, match="complex array"):
        s2s_ad.jvp(squared_modulus, (X + 1j,), (np.ones(3),))
    with pytest.raises(TransformError, match="complex array"):
        s2s_ad.vjp(squared_modulus, X + 1j)


def test_a_type_test_against_complex_is_no_complex_value():
    """isinstance(x, complex) only tests: the type is no dtype there, and the code is differentiated."""
    assert s2s_ad.grad(is_complex_branch)(3.0) == 6.0


def test_the_real_call_before_and_after_is_unchanged():
    gradient = s2s_ad.grad(squared_modulus)
    np.testing.assert_allclose(gradient(X), 2 * X)
    with pytest.raises(TransformError):
        gradient(X + 0j)  # (same shape as the real call: the cached kinds do not let it through)
    np.testing.assert_allclose(gradient(X * 2), 4 * X)


@pytest.mark.parametrize("fn, shown", [
    (literal, "complex value 2j"), (global_constant, "complex value 'Z'"),
    (builtin_complex, r"made by complex\(\.\.\.\)"), (numpy_complex_type, r"made by complex128\(\.\.\.\)"),
    (dtype_keyword, "complex dtype 'complex128'"), (dtype_string, "complex dtype 'complex128'"),
    (astype_complex, "complex dtype 'complex'"), (positional_dtype, "complex dtype 'complex'"),
    (fourier, r"made by fft\(\.\.\.\)")])
def test_a_complex_value_in_the_code_is_refused_at_its_line(fn, shown):
    argument = 2.0 if fn is builtin_complex else X
    with pytest.raises(TransformError, match=shown) as refused:
        s2s_ad.grad(fn)(argument)
    assert refused.value.line == fn.__code__.co_firstlineno + 1
    assert refused.value.filename.endswith("test_complex_refused.py")
    assert "real and imaginary parts" in str(refused.value)
