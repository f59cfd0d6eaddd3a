"""No internal error where a gradient is due (issue #12): constructs that once crashed in generated
code now give derivatives that agree with central finite differences in grad, vjp, jvp and hessian.

The functions are in crash_functions.py, written as a user would.  Second derivatives are checked
against second differences of the function itself, never against our own first derivatives.
"""
import sys

import numpy as np
import pytest

import s2s_ad
import s2s_ad.passes.optimize
import crash_functions as cf
from conftest import function_from_file, numeric_grad


def _second_differences(f, args, h=1e-4):
    """The Hessian of scalar ``f`` by its first argument, from values of ``f`` alone."""
    x = args[0]
    if np.ndim(x) == 0:
        return (f(x + h, *args[1:]) - 2 * f(x, *args[1:]) + f(x - h, *args[1:])) / h ** 2
    x = np.asarray(x, dtype=float)
    n = x.size
    hessian = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            def at(di, dj):
                y = x.copy()
                y[i] += di
                y[j] += dj
                return f(y, *args[1:])
            hessian[i, j] = (at(h, h) - at(h, -h) - at(-h, h) + at(-h, -h)) / (4 * h * h)
    return hessian


def _check_everything(f, args):
    """grad, vjp, jvp and hessian of ``f`` by its first argument against finite differences."""
    want = numeric_grad(f, args, 0)
    name = f.__name__
    np.testing.assert_allclose(s2s_ad.grad(f)(*args), want, rtol=1e-5, atol=1e-6, err_msg=f"grad {name}")
    value, pullback = s2s_ad.vjp(f, *args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12, err_msg=f"vjp value {name}")
    np.testing.assert_allclose(pullback(1.0)[0], want, rtol=1e-5, atol=1e-6, err_msg=f"vjp {name}")
    direction = np.linspace(0.5, -1.0, np.size(args[0])).reshape(np.shape(args[0]))
    if np.ndim(args[0]) == 0:
        direction = 0.75
    tangents = (direction,) + tuple(np.zeros_like(a) if isinstance(a, np.ndarray) else 0.0 for a in args[1:])
    value, tangent = s2s_ad.jvp(f, tuple(args), tangents)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12, err_msg=f"jvp value {name}")
    np.testing.assert_allclose(tangent, np.sum(want * direction), rtol=1e-5, atol=1e-6, err_msg=f"jvp {name}")
    np.testing.assert_allclose(s2s_ad.hessian(f)(*args), _second_differences(f, args), rtol=1e-4, atol=1e-4,
                               err_msg=f"hessian {name}")


SCALAR_CASES = [
    (cf.loop_in_branch_after_first, [0.2, 0.4]),
    (cf.loop_after_continue, [0.3, 0.9]),
    (cf.loops_three_deep_in_branch, [0.3, 0.7]),
    (cf.while_loops_after_continue, [0.3, 0.7]),
    (cf.break_and_continue_around_loops, [0.3, 1.4, 2.5]),
    (cf.while_in_branch_of_for, [0.3, 0.7]),
    (cf.returns_between_loops, [0.7, 2.5, 11.0]),
    (cf.returns_in_loop_in_branch, [0.3, 1.4, 2.5]),
    (cf.returns_from_nested_loops, [0.3, 1.4, 6.0]),
    (cf.returns_from_nested_whiles, [0.3, 0.7, 2.5]),
    (cf.returns_reading_an_array, [0.3, 1.4, 2.5]),
    (cf.helper_returning_early_in_loop, [0.3, 0.7, 2.5]),
    (cf.helper_returning_early_in_branch, [0.3, 1.4]),
    (cf.helpers_returning_between_loops, [0.7, 2.5]),
    (cf.keyword_only_helper, [0.3, -1.2]),
    (cf.keyword_only_helper_in_loop, [0.3, 2.0]),
]


@pytest.mark.parametrize("f, x", [(f, x) for f, xs in SCALAR_CASES for x in xs],
                         ids=lambda v: getattr(v, "__name__", str(v)))
def test_scalar_function(f, x):
    _check_everything(f, (x,))


@pytest.mark.parametrize("f", [cf.tuple_items_in_branch, cf.tuple_items_in_loop, cf.tuple_items_in_branch_in_loop],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [np.array([0.3, -0.5, 0.9]), np.array([-0.3, -0.5, 0.4])])
def test_tuple_of_different_shapes_read_by_index(f, x):
    _check_everything(f, (x,))


@pytest.mark.parametrize("f", [cf.copy_written, cf.copy_updated_in_loop, cf.copy_written_in_branch],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [np.array([0.3, -0.5, 0.9]), np.array([-0.3, 0.5, 0.4])])
def test_copy_of_a_constant_array_written_into(f, x):
    _check_everything(f, (x, np.array([1.0, 2.0, 3.0])))
    v = np.array([1.0, 2.0, 3.0])  # by the copied array too
    np.testing.assert_allclose(s2s_ad.hessian(f, wrt=1)(x, v), _second_differences(lambda a, b: f(b, a), (v, x)),
                               rtol=1e-4, atol=1e-4)


def test_keyword_only_helper_is_called_by_name_in_generated_code():
    source = s2s_ad.grad(cf.keyword_only_helper).source
    assert "scale=" in source  # the constant call runs as written: _scaled(2.0, scale=4.0)


# -- generated code Python can compile, in time linear in the function ---------------------------



def _elif_chain(n):
    lines = ["import numpy as np", "", "def f(x, k):", "    if k == 0:", "        y = x * x"]
    for i in range(1, n):
        lines += [f"    elif k == {i}:", f"        y = np.sin(x) * {i}.0 + x"]
    lines += ["    else:", "        y = x", "    return y * x"]
    return "\n".join(lines) + "\n"


@pytest.mark.slow
@pytest.mark.parametrize("k", [0, 7, 60, 99, 150])
def test_if_elif_chain_of_100_branches(tmp_path, k):
    f = function_from_file(tmp_path, "chain", _elif_chain(100))
    x = 0.7
    want = numeric_grad(f, (x, k), 0)
    np.testing.assert_allclose(s2s_ad.grad(f)(x, k), want, rtol=1e-6)
    np.testing.assert_allclose(s2s_ad.vjp(f, x, k)[1](1.0)[0], want, rtol=1e-6)
    np.testing.assert_allclose(s2s_ad.jvp(f, (x, k), (1.0, 0))[1], want, rtol=1e-6)
    np.testing.assert_allclose(s2s_ad.hessian(f)(x, k), _second_differences(f, (x, k)), rtol=1e-4, atol=1e-4)
    depth = max(len(line) - len(line.lstrip()) for line in s2s_ad.grad(f).source.splitlines()) // 4
    assert depth < 50


def _shift_register(n):
    """f(x): a loop body that hands n values along (a0 = a1; a1 = a2; ...)."""
    start = "".join(f"    a{i} = x * {i + 1}.0\n" for i in range(n))
    shift = "".join(f"        a{i} = a{i + 1}\n" for i in range(n - 1))
    return (f"import numpy as np\n\ndef f(x):\n{start}    for t in range(3):\n{shift}"
            f"        a{n - 1} = np.sin(a0) + a{n - 1}\n    return a0 + a{n - 1}\n")


def test_shift_register_gradient(tmp_path):
    f = function_from_file(tmp_path, "shift_8", _shift_register(8))
    _check_everything(f, (0.3,))


def test_dead_code_removal_passes_over_a_loop_a_fixed_number_of_times(tmp_path, monkeypatch):
    """Removing dead code walks a loop body a number of times that does not grow with the length of
    a chain of carried values (it once walked it again for each link: quadratic)."""
    walks = []
    dead = s2s_ad.passes.optimize._dead

    def counted(body, live, *rest):
        walks.append(len(body))
        return dead(body, live, *rest)

    monkeypatch.setattr(s2s_ad.passes.optimize, "_dead", counted)
    counts = []
    for n in (10, 40):
        f = function_from_file(tmp_path, f"shift_{n}", _shift_register(n))
        walks.clear()
        s2s_ad.grad(f)(0.3)  # argument kinds known, as in use
        counts.append(len(walks))
    assert counts[0] == counts[1]


def _lines_run(f):
    """How many lines of s2s_ad's own code run to build the gradient of ``f`` (a measure of work)."""
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if "/s2s_ad/" not in frame.f_code.co_filename.replace("\\", "/"):  # the library, not what it generated
            return None
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        s2s_ad.grad(f)(0.3)
    finally:
        sys.settrace(None)
    return count


def test_transform_work_is_linear_in_a_chain_of_carried_values(tmp_path):
    """Doubling the chain's length at most about doubles the work of every stage (lowering, analysis,
    reverse sweep, optimisation): the growth from 40 to 80 links is not more than 2.5 times the growth
    from 20 to 40 (quadratic work gives 4 times)."""
    _lines_run(function_from_file(tmp_path, "chain_3", _shift_register(3)))  # rules loaded, caches warm
    work = [_lines_run(function_from_file(tmp_path, f"chain_{n}", _shift_register(n))) for n in (20, 40, 80)]
    assert work[2] - work[1] < 2.5 * (work[1] - work[0]), work
