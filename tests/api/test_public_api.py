"""The public contract of docs/api.md for reverse mode: names, argument forms, return shapes."""
import importlib.util
import math
import os
import re
import sys
import traceback

import numpy as np
import pytest

import s2s_ad
from conftest import assert_gradient_matches, numeric_grad


def f(x, y):
    return x * x * y + np.sin(y)


def with_defaults(a, b=2.0, *, c=3.0):
    return a * b + c * a * a


def loss(a, b, data):
    return np.sum((a * data + b) ** 2)


def vector_valued(x):
    return x * 2.0


def sum_plus_bias(x, b):
    return np.sum((x + b) ** 2)


def divides(x):
    return np.sum(1.0 / x)


def test_wrt_by_position_name_negative_and_tuple():
    x, y = 1.5, 0.5
    d_x, d_y = 2 * x * y, x * x + np.cos(y)
    assert s2s_ad.grad(f)(x, y) == pytest.approx(d_x)
    assert s2s_ad.grad(f, wrt=1)(x, y) == pytest.approx(d_y)
    assert s2s_ad.grad(f, wrt=-1)(x, y) == pytest.approx(d_y)
    assert s2s_ad.grad(f, wrt="y")(x, y) == pytest.approx(d_y)
    assert s2s_ad.grad(f, wrt=(0, "y"))(x, y) == pytest.approx((d_x, d_y))
    single = s2s_ad.grad(f, wrt=("x",))(x, y)
    assert isinstance(single, tuple) and single == pytest.approx((d_x,))


def test_decorator_forms():
    @s2s_ad.grad
    def square(x):
        return x * x

    @s2s_ad.grad(wrt=("a", "b"))
    def two(a, b, data):
        return a * b * data

    assert square(3.0) == pytest.approx(6.0)
    assert two(2.0, 3.0, 4.0) == pytest.approx((12.0, 8.0))


def test_same_call_signature_as_the_function():
    grad_a = s2s_ad.grad(with_defaults)
    assert grad_a(1.5) == pytest.approx(2.0 + 2 * 3.0 * 1.5)
    assert grad_a(1.5, 4.0, c=0.5) == pytest.approx(4.0 + 2 * 0.5 * 1.5)
    assert grad_a(a=1.5, b=4.0) == pytest.approx(4.0 + 2 * 3.0 * 1.5)


def test_value_and_grad():
    value, (d_a, d_b) = s2s_ad.value_and_grad(loss, wrt=("a", "b"))(0.5, 1.0, np.arange(3.0))
    assert value == pytest.approx(loss(0.5, 1.0, np.arange(3.0)))
    assert d_b == pytest.approx(np.sum(2 * (0.5 * np.arange(3.0) + 1.0)))


def test_gradients_have_the_type_and_shape_of_their_argument():
    g = s2s_ad.grad(sum_plus_bias, wrt=(0, 1))
    d_x, d_b = g(np.ones((4, 3)), 0.5)
    assert isinstance(d_b, float) and d_x.shape == (4, 3)
    d_x, d_b = g(np.ones((4, 3), dtype=np.float32), np.ones(3, dtype=np.float32))
    assert d_x.shape == (4, 3) and d_b.shape == (3,) and d_b.dtype.kind == "f"
    assert isinstance(s2s_ad.grad(f)(2.0, 1), float)  # an int argument not differentiated is fine


@pytest.mark.parametrize("maker", [s2s_ad.grad, s2s_ad.value_and_grad, s2s_ad.jacobian, s2s_ad.hessian])
@pytest.mark.parametrize("value, kind, instead", [
    (3, "an integer (int)", "a float (3.0)"), (True, "a boolean", "a float (1.0)"),
    (np.int64(2), "an integer (int64)", "a float (2.0)"),
    (np.arange(3), "an integer array (int64)", "a float array (x.astype(float))"),
    (np.array([True, False]), "a boolean array (bool)", "a float array (x.astype(float))")],
    ids=["int", "bool", "np.int64", "int array", "bool array"])
def test_an_integer_or_boolean_argument_by_wrt_is_a_type_error_as_in_jax(maker, value, kind, instead):
    def square_sum(x, n):
        return np.sum(x * x) * n
    name = maker.__name__
    expected = (re.escape(f"{name} of 'square_sum' with respect to x: x = ") + ".+"
                + re.escape(f" is {kind}, which has no derivative ({name} takes float arguments alone, as JAX's "
                            f"does); pass {instead}, or leave x out of wrt") + "$")
    differentiated = maker(square_sum)
    for _ in range(2):  # (and never cached: a second call is refused too)
        with pytest.raises(TypeError, match=expected):
            differentiated(value, 2)
    if maker is s2s_ad.grad:  # after a float call, whose code is cached, still refused
        assert differentiated(2.0, 3) == 12.0
        with pytest.raises(TypeError, match="with respect to x"):
            differentiated(value, 2)


def test_jax_refuses_the_same_integer_arguments():
    jax = pytest.importorskip("jax")
    for value in (3, True, np.arange(3)):
        with pytest.raises(TypeError, match="integer|Boolean"):
            jax.grad(lambda x: jax.numpy.sum(x * x))(value)


@pytest.mark.parametrize("b", [np.ones(3), np.ones((4, 1)), 0.5, np.ones((1, 3))], ids=["row", "column", "number", "2d-row"])
def test_broadcasting_reduces_to_each_arguments_shape(b):
    x = np.linspace(0.1, 1.2, 12).reshape(4, 3)
    assert_gradient_matches(sum_plus_bias, (x, b), (0, 1))
    # the generic code (before specialisation) agrees
    generic = s2s_ad.driver.pipeline.build_reverse(sum_plus_bias, ("x", "b"), (None, None)).function(x, b)[1]
    np.testing.assert_allclose(generic[1], numeric_grad(sum_plus_bias, [x, b], 1), rtol=1e-6)


def test_non_scalar_result_is_an_error_not_a_sum():
    with pytest.raises(TypeError, match="vjp"):
        s2s_ad.grad(vector_valued)(np.ones(3))


def test_arguments_are_never_mutated():
    x, b = np.arange(6.0).reshape(2, 3), np.ones(3)
    x0, b0 = x.copy(), b.copy()
    s2s_ad.grad(sum_plus_bias, wrt=(0, 1))(x, b)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(b, b0)


@pytest.mark.parametrize("wrt, error", [(5, ValueError), ("z", ValueError), (1.5, TypeError), ((0, 0), ValueError)])
def test_bad_wrt(wrt, error):
    with pytest.raises(error):
        s2s_ad.grad(f, wrt=wrt)


def test_asking_twice_reuses_the_compiled_adjoint():
    g = s2s_ad.grad(f)
    g(1.0, 2.0)
    entries = len(s2s_ad.api.calling._CACHE._entries)
    again = s2s_ad.grad(f)
    again(1.0, 2.0)
    assert len(s2s_ad.api.calling._CACHE._entries) == entries
    assert again.source == g.source


def _module(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_redefining_a_function_gives_a_fresh_gradient(tmp_path):
    first = _module(tmp_path, "redefined_a", "def h(x):\n    return x * x\n")
    second = _module(tmp_path, "redefined_b", "def h(x):\n    return x * x * x\n")
    assert s2s_ad.grad(first.h)(2.0) == pytest.approx(4.0)
    assert s2s_ad.grad(second.h)(2.0) == pytest.approx(12.0)


def test_source_forms():
    g = s2s_ad.grad(f, wrt=(0, 1))
    generic = g.source
    assert "def d_f(" in generic and "unbroadcast" in generic
    compile(generic, "<test>", "exec")
    assert "unbroadcast" not in g.source_for(1.0, 2.0)
    g(1.0, 2.0)
    assert "Specialised for: x number, y number." in g.source
    assert "def f(" in s2s_ad.source(f, stage="ssa")
    assert "# reverse sweep" in s2s_ad.source(f, stage="adjoint")
    with pytest.raises(ValueError):
        s2s_ad.source(f, stage="final")


def test_traceback_inside_generated_code_shows_the_generated_line():
    with np.errstate(divide="raise"):
        try:
            s2s_ad.grad(divides)(np.array([1.0, 0.0]))
        except FloatingPointError:
            text = traceback.format_exc()
        else:
            pytest.fail("no error raised")
    assert "<s2s_ad d_divides from test_public_api.py:" in text
    assert "/ x" in text  # the generated statement itself is shown


def refused_by_a_try(x):
    try:
        return x * x
    except ValueError:
        return 0.0


@pytest.mark.parametrize("call", [
    lambda: s2s_ad.grad(refused_by_a_try)(1.0),
    lambda: s2s_ad.grad(refused_by_a_try)(np.ones(2)),
    lambda: s2s_ad.value_and_grad(refused_by_a_try)(1.0),
    lambda: s2s_ad.grad(s2s_ad.grad(refused_by_a_try))(1.0),
    lambda: s2s_ad.jvp(refused_by_a_try, (1.0,), (1.0,)),
    lambda: s2s_ad.vjp(refused_by_a_try, 1.0),
    lambda: s2s_ad.jacobian(refused_by_a_try)(np.ones(2)),
    lambda: s2s_ad.hessian(refused_by_a_try)(np.ones(2)),
    lambda: s2s_ad.hessian(refused_by_a_try).source_for(np.ones(2)),
    lambda: s2s_ad.check_grad(refused_by_a_try, 1.0),
    lambda: s2s_ad.source(refused_by_a_try),
    lambda: s2s_ad.grad(refused_by_a_try).source_for(1.0),
    lambda: s2s_ad.grad(refused_by_a_try).source,
], ids=["grad", "grad of an array", "value_and_grad", "grad of grad", "jvp", "vjp", "jacobian", "hessian",
        "hessian.source_for", "check_grad", "source", "source_for", ".source"])
def test_a_transform_error_s_traceback_ends_at_the_users_call(call):
    """docs/api.md: no internal traceback is shown.  The traceback has this file's frames alone, the
    last one the line of the call (the lambda), and no cause or context of s2s_ad's is printed."""
    try:
        call()
    except s2s_ad.TransformError as exc:
        error = exc
    else:
        pytest.fail("no TransformError raised")
    frames = traceback.extract_tb(error.__traceback__)
    printed = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    if sys.version_info < (3, 11):  # (a bare raise cannot hand on a trimmed traceback there: docs/api.md)
        last = frames.pop()
        assert os.path.dirname(last.filename).endswith(os.path.join("s2s_ad", "api")) and last.line == "raise exc"
        printed = printed.replace(last.filename, "")
    assert [frame.filename for frame in frames] == [__file__] * len(frames), traceback.format_tb(error.__traceback__)
    assert frames[-1].line.startswith("lambda: s2s_ad.")
    assert printed.count("Traceback (most recent call last)") == 1 and "/s2s_ad/" not in printed.split(
        "TransformError")[0], printed
    assert f"test_public_api.py:{refused_by_a_try.__code__.co_firstlineno + 1}" in str(error)


def test_user_rule_for_a_black_box():
    def black_box(x, y):
        return float(np.cbrt(x) * y)

    @s2s_ad.adjoint(black_box)
    def _(out, x, y, d_out):
        d_x = d_out * y / (3.0 * np.cbrt(x) ** 2)
        d_y = d_out * np.cbrt(x)

    def uses(x, y):
        return black_box(x, y) * x

    assert s2s_ad.grad(uses, wrt=(0, 1))(2.0, 0.7) == pytest.approx(
        (numeric_grad(uses, (2.0, 0.7), 0), numeric_grad(uses, (2.0, 0.7), 1)))
    with pytest.raises(s2s_ad.TransformError, match=r"black_box in forward mode.*@s2s_ad.tangent"):
        s2s_ad.jvp(uses, (2.0, 0.7), (1.0, 0.0))

    @s2s_ad.tangent(black_box)
    def _(out, x, y, t_x, t_y):
        t_out = t_x * y / (3.0 * np.cbrt(x) ** 2) + t_y * np.cbrt(x)

    assert_gradient_matches(uses, (2.0, 0.7), (0, 1))  # and forward mode agrees


def first_item_squared(x):
    return np.sum(x[0] * x[0])


def test_arrays_of_different_rank_get_their_own_code():
    g = s2s_ad.grad(first_item_squared)
    np.testing.assert_allclose(g(np.array([3.0, 1.0])), [6.0, 0.0])
    np.testing.assert_allclose(g(np.array([[3.0, 1.0], [2.0, 2.0]])), [[6.0, 2.0], [0.0, 0.0]])
    np.testing.assert_allclose(g(np.array([2.0, 5.0])), [4.0, 0.0])


def log_of_a_difference(x, y):
    scaled = x * 2.0
    return math.log(scaled - y) * x  # two operations on this line: the failing one is the second


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception notes are Python 3.11+")
def test_an_error_in_generated_code_names_the_users_line():
    line = log_of_a_difference.__code__.co_firstlineno + 2
    with pytest.raises(ValueError) as caught:
        s2s_ad.grad(log_of_a_difference)(1.0, 2.0)  # log(0) in the forward sweep
    notes = getattr(caught.value, "__notes__", [])
    assert any(f"generated from line {line} of test_public_api.py" in n for n in notes), notes
    with pytest.raises(ZeroDivisionError) as caught:
        s2s_ad.grad(root_of_a_square)(0.0)  # the forward sweep works; the reverse divides by zero
    line = root_of_a_square.__code__.co_firstlineno + 1
    assert any(f"generated from line {line} of test_public_api.py" in n for n in caught.value.__notes__)


def root_of_a_square(x):
    return math.sqrt(x * x) + x
