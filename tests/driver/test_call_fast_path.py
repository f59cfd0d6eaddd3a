"""The cached call's fast path never runs code made for arguments of other kinds, nor stale code.

A gradient remembers the last call's argument types (and its arrays' shapes and dtypes) in one
generated test (``GradientFunction._hit``), and finds other calls by dictionaries keyed on the same.
These tests call one gradient object with arguments whose kinds differ from the previous call's in
one way each (shape, pattern of equal lengths, dtype, aliasing, views, writeability, number type,
0-d arrays, subclasses, big integers, flags) and with names, cells, defaults and code changed between
calls, and check every result against closed forms or central differences.  Each test runs on the
Python backend and, where Numba is installed, on ``backend="numba"`` (whose calls of float32 data
and big integers run as Python, with a ``CompileFallbackWarning``).
"""
from __future__ import annotations

import math
import textwrap
import warnings

import numpy as np
import pytest

import s2s_ad
from conftest import module_from_source as _module_in, numeric_grad, optional_import

numba = optional_import("numba")
BACKENDS = ["python", pytest.param("numba", marks=pytest.mark.skipif(
    numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')"))]


@pytest.fixture(autouse=True)
def _quiet_fallbacks(tmp_path_factory, monkeypatch):
    """Numba's fallbacks (float32 data, big integers) are expected here: the numbers are what is
    checked.  Compiled code is cached in a folder of this session's."""
    monkeypatch.setenv("S2S_AD_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "s2s_ad_cache"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", s2s_ad.CompileFallbackWarning)
        yield


def _module(tmp_path, source):
    return _module_in(tmp_path, "fast_path_", textwrap.dedent(source))


def weighted(a, b):
    return np.sum(a * b) + np.sum(a ** 2)


def poly(x, y):
    return x * x * y + 3.0 * x


def flagged(x, flag):
    if flag:
        return x * x
    return 3.0 * x


def _independent(result, *args):
    """No result shares memory with an argument or another result, and each is writable."""
    arrays = [r for r in result if isinstance(r, np.ndarray)]
    for i, r in enumerate(arrays):
        assert r.flags.writeable
        for a in args:
            if isinstance(a, np.ndarray):
                assert not np.shares_memory(r, a)
        for other in arrays[i + 1:]:
            assert not np.shares_memory(r, other)


@pytest.mark.parametrize("backend", BACKENDS)
def test_arrays_of_other_shapes_and_patterns_of_lengths(backend):
    gradient = s2s_ad.grad(weighted, wrt=(0, 1), backend=backend)
    rng = np.random.default_rng(0)
    for shape_a, shape_b in [((3,), (3,)), ((3,), (3,)), ((4,), (4,)), ((3,), (1,)), ((2, 3), (3,)),
                             ((2, 3), (2, 1)), ((3, 3), (3, 3)), ((3,), (3,)), ((2, 3), (3,))]:
        a, b = rng.normal(size=shape_a), rng.normal(size=shape_b)
        d_a, d_b = gradient(a, b)
        assert d_a.shape == a.shape and d_b.shape == b.shape
        np.testing.assert_allclose(d_a, np.broadcast_to(b, np.broadcast_shapes(a.shape, b.shape)) + 2 * a)
        np.testing.assert_allclose(d_b, numeric_grad(weighted, (a, b), 1), rtol=1e-6, atol=1e-8)
        _independent((d_a, d_b), a, b)


@pytest.mark.parametrize("backend", BACKENDS)
def test_aliased_arguments_views_owners_and_read_only_arrays(backend):
    gradient = s2s_ad.grad(weighted, wrt=(0, 1), backend=backend)
    base = np.arange(1.0, 11.0)
    owner = base[::2].copy()
    read_only = owner.copy()
    read_only.flags.writeable = False
    calls = [(owner, owner + 1.0), (owner, owner), (base[::2], base[1::2]), (base[:5], base[:5]),
             (owner, owner + 1.0), (read_only, read_only), (base[::2], owner), (owner, owner)]
    for a, b in calls:
        d_a, d_b = gradient(a, b)
        np.testing.assert_allclose(d_a, b + 2 * a)
        np.testing.assert_allclose(d_b, a)
        _independent((d_a, d_b), a, b, base)
        d_a[...] = np.nan  # writing into a gradient changes no argument and no later result
        assert np.all(np.isfinite(base)) and np.all(np.isfinite(owner))


def linear(a, b):
    return np.sum(a * b)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_gradient_equal_to_an_argument_is_never_that_argument(backend):
    gradient = s2s_ad.grad(linear, wrt=(0, 1), backend=backend)
    a, b = np.arange(3.0), np.arange(3.0) + 5.0
    for x, y in [(a, b), (a, b), (a, a), (b, a), (a[::-1], b), (a, b)]:
        d_x, d_y = gradient(x, y)
        np.testing.assert_array_equal(d_x, y)
        np.testing.assert_array_equal(d_y, x)
        _independent((d_x, d_y), x, y, a, b)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dtypes_change_between_calls_of_the_same_shapes(backend):
    gradient = s2s_ad.grad(weighted, wrt=(0, 1), backend=backend)
    for dtype in [np.float64, np.float32, np.float64, np.float32, np.float16, np.float64]:
        a, b = np.arange(1.0, 4.0, dtype=dtype), np.arange(2.0, 5.0, dtype=dtype)
        d_a, d_b = gradient(a, b)
        assert d_a.dtype == dtype and d_b.dtype == dtype
        np.testing.assert_allclose(d_a, (b + 2 * a).astype(float), rtol=1e-3)
        np.testing.assert_allclose(d_b, a.astype(float), rtol=1e-3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_number_types_change_between_calls(backend):
    gradient = s2s_ad.grad(poly, wrt=(0, 1), backend=backend)

    class MyFloat(float):
        pass

    calls = [(3.0, 2.0), (3, 2), (3.0, 2.0), (np.float32(3.0), 2.0), (np.float64(3.0), 2.0), (3.0, 2.0),
             (np.array(3.0), 2.0), (3.0, np.array(2.0)), (MyFloat(3.0), 2.0), (np.int64(3), 2.0),
             (2 ** 70, 2.0), (3.0, 2.0), (True, 2.0), (3.0, 2.0)]
    for x, y in calls:
        if isinstance(x, (int, np.integer)) or isinstance(y, (int, np.integer)):  # bool too
            # by an integer or boolean: refused (as in JAX) at every call, however the cache stands
            with pytest.raises(TypeError, match="is an integer|is a boolean"):
                gradient(x, y)
            continue
        d_x, d_y = gradient(x, y)
        np.testing.assert_allclose(float(d_x), 2.0 * float(x) * float(y) + 3.0, rtol=1e-6)
        np.testing.assert_allclose(float(d_y), float(x) ** 2, rtol=1e-6)
        if isinstance(x, np.float32):
            assert isinstance(d_x, np.float32)
        if isinstance(x, np.ndarray):
            assert isinstance(d_x, np.ndarray) and d_x.shape == ()
        if type(x) is float and type(y) is float:
            assert type(d_x) is float and type(d_y) is float


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_flag_changes_between_calls(backend):
    gradient = s2s_ad.grad(flagged, backend=backend)
    for flag, expected in [(True, 4.0), (False, 3.0), (1, 4.0), (0, 3.0), (np.True_, 4.0), (False, 3.0),
                           (True, 4.0)]:
        assert gradient(2.0, flag) == pytest.approx(expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_array_subclass_and_then_plain_arrays(backend):
    class Tagged(np.ndarray):
        pass

    gradient = s2s_ad.grad(weighted, wrt=(0, 1), backend=backend)
    a, b = np.arange(1.0, 4.0), np.arange(2.0, 5.0)
    for x, y in [(a, b), (a.view(Tagged), b), (a, b), (a, b.view(Tagged)), (a, b)]:
        d_a, d_b = gradient(x, y)
        np.testing.assert_allclose(np.asarray(d_a), b + 2 * a)
        np.testing.assert_allclose(np.asarray(d_b), a)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_global_and_a_module_attribute_rebound_between_cached_calls(tmp_path, backend):
    module = _module(tmp_path, f"""
        import numpy as np
        SCALE = 2.0

        def scaled(x):
            return SCALE * x * x

        def scaled_sum(a):
            return np.sum(SCALE * a * a)
        # {backend}
    """)
    on_numbers = s2s_ad.grad(module.scaled, backend=backend)
    on_arrays = s2s_ad.grad(module.scaled_sum, backend=backend)
    a = np.arange(3.0)
    for scale in [2.0, 2.0, 5.0, 5.0, -1.0, 2.0]:
        module.SCALE = scale
        assert on_numbers(3.0) == pytest.approx(2 * scale * 3.0)
        np.testing.assert_allclose(on_arrays(a), 2 * scale * a)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_closure_cell_and_a_helpers_defaults_changed_between_cached_calls(tmp_path, backend):
    module = _module(tmp_path, f"""
        import numpy as np

        def helper(x, p=2.0):
            return p * x

        def uses_helper(a):
            return np.sum(helper(a) * a)

        def make():
            k = 2.0

            def f(x):
                return k * x * x

            def set_k(value):
                nonlocal k
                k = value
            return f, set_k
        # {backend}
    """)
    f, set_k = module.make()
    on_cell = s2s_ad.grad(f, backend=backend)
    on_helper = s2s_ad.grad(module.uses_helper, backend=backend)
    a = np.arange(3.0)
    for k in [2.0, 2.0, 7.0, 7.0, 2.0]:
        set_k(k)
        module.helper.__defaults__ = (k,)
        assert on_cell(3.0) == pytest.approx(2 * k * 3.0)
        np.testing.assert_allclose(on_helper(a), 2 * k * a)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_short_helpers_code_replaced_between_cached_calls(tmp_path, backend):
    """``square`` is lowered in place into ``uses_square``'s code: replacing its code (as IPython's
    %autoreload does) must rebuild that code, not keep the old helper's lines."""
    module = _module(tmp_path, f"""
        import numpy as np

        def square(x):
            return x * x

        def cube(x):
            return x * x * x

        def uses_square(a):
            return np.sum(square(a) * 2.0)
        # {backend}
    """)
    gradient = s2s_ad.grad(module.uses_square, backend=backend)
    a = np.arange(1.0, 4.0)
    np.testing.assert_allclose(gradient(a), 4 * a)
    np.testing.assert_allclose(gradient(a), 4 * a)
    module.square.__code__ = module.cube.__code__
    np.testing.assert_allclose(gradient(a), 6 * a * a)
    np.testing.assert_allclose(gradient(a), numeric_grad(module.uses_square, (a,), 0), rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_functions_code_and_defaults_replaced_between_cached_calls(tmp_path, backend):
    module = _module(tmp_path, f"""
        import numpy as np

        def f(a, c=1.0):
            return c * np.sum(a * a)

        def g(a, c=1.0):
            return c * np.sum(a * a * a)
        # {backend}
    """)
    gradient = s2s_ad.grad(module.f, backend=backend)
    a = np.arange(1.0, 4.0)
    np.testing.assert_allclose(gradient(a, 1.0), 2 * a)
    np.testing.assert_allclose(gradient(a, 1.0), 2 * a)
    module.f.__code__ = module.g.__code__  # (as IPython's %autoreload does)
    np.testing.assert_allclose(gradient(a, 1.0), 3 * a * a)
    np.testing.assert_allclose(gradient(a), 3 * a * a)
    module.f.__defaults__ = (2.0,)
    np.testing.assert_allclose(gradient(a), 6 * a * a)
    np.testing.assert_allclose(gradient(a, 1.0), 3 * a * a)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_last_calls_test_serves_repeated_calls(backend):
    """White-box: the hot path's one generated test hits on a repeated call (numbers; arrays), and
    misses for arguments of another type, shape or dtype."""
    on_numbers = s2s_ad.grad(poly, wrt=(0, 1), backend=backend)
    on_numbers(3.0, 2.0)
    on_numbers(3.0, 2.0)
    assert on_numbers._hit((3.0, 2.0)) is not False
    assert on_numbers._hit((3, 2.0)) is False
    on_arrays = s2s_ad.grad(weighted, wrt=(0, 1), backend=backend)
    a, b = np.arange(3.0), np.arange(3.0)
    on_arrays(a, b)
    on_arrays(a, b)
    assert on_arrays._hit((a, b)) is not False
    assert on_arrays._hit((np.arange(4.0), np.arange(4.0))) is False
    assert on_arrays._hit((a.astype(np.float32), b)) is False
    assert on_arrays._hit((a, 1.0)) is False


@pytest.mark.self_check_off  # (a self-checked call has a result to finish: it takes the _hit path, tested above)
@pytest.mark.parametrize("backend", BACKENDS)
def test_the_run_of_a_call_of_numbers_serves_only_its_own_types_and_count(backend):
    """White-box: a repeated call of numbers runs in one generated function (``_run_hit``), which
    gives a gradient only for the very types and count of the call it was made for; other calls
    (another count, a subclass, a NumPy number, a keyword, an error in the code) take the slower
    path, and each result is the closed form's."""
    gradient = s2s_ad.grad(poly, wrt=(0, 1), backend=backend)
    gradient(3.0, 2.0)
    gradient(3.0, 2.0)
    run = gradient._run_hit
    assert run((3.0, 2.0)) == pytest.approx((2.0 * 3.0 * 2.0 + 3.0, 9.0))

    class MyFloat(float):
        pass

    missed = run((3.0,)), run((3.0, 2.0, 5.0)), run((MyFloat(3.0), 2.0)), run((np.float64(3.0), 2.0))
    assert not any(isinstance(result, tuple) for result in missed)
    with pytest.raises(TypeError):
        gradient(3.0, 2.0, 5.0)  # (d_out is not the caller's to pass: Python's binding refuses a third)
    assert gradient(x=3.0, y=2.0) == pytest.approx((15.0, 9.0))
    assert gradient(MyFloat(1.0), 2.0) == pytest.approx((7.0, 1.0))
    assert gradient(3.0, 2.0) == pytest.approx((15.0, 9.0))
    rooted = s2s_ad.grad(root_of_product, wrt=(0, 1), backend=backend)
    assert rooted(2.0, 8.0) == pytest.approx((1.0, 0.25))
    assert rooted(2.0, 8.0) == pytest.approx((1.0, 0.25))  # (by its run)
    with pytest.raises(ValueError, match="math domain error"):  # raised in the run: not read as a miss
        rooted(-2.0, 8.0)


@pytest.mark.self_check_off  # (a self-checked call has a result to finish: it takes the _hit path)
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("wrt", [0, (0,)])
def test_the_run_of_a_call_with_arrays_serves_only_its_own_shapes_and_dtypes(backend, wrt):
    """White-box: a repeated call with arrays whose gradient is handed over as returned runs in one
    generated function (``_run_hit``, ``calling._run_function_of_arrays``), which gives a gradient
    only for arrays of the very shapes and dtypes (and arguments of the types and count) it was made
    for; a gradient it cannot hand over as it is comes back ``Unfinished`` and the call finishes it.
    Each result is the closed form's, independent of the arguments and of earlier results."""
    from s2s_ad.api.calling import _MISSED, Unfinished
    gradient = s2s_ad.grad(weighted, wrt=wrt, backend=backend)
    unwrapped = (lambda g: g[0]) if isinstance(wrt, tuple) else (lambda g: g)
    a, b = np.arange(3.0), np.arange(3.0) + 5.0
    gradient(a, b)
    gradient(a, b)
    run = gradient._run_hit
    first = unwrapped(run((a, b)))
    np.testing.assert_allclose(first, b + 2 * a)
    for other in [(a[:2], b[:2]), (a.astype(np.float32), b), (a, b, 1.0), (list(a), b), (a.reshape(3, 1), b),
                  (a,)]:
        assert run(other) is _MISSED
    earlier = [first]
    for dtype in (np.float32, np.float64, np.float32):
        x, y = a.astype(dtype), b.astype(dtype)
        for _ in range(3):
            d_x = unwrapped(gradient(x, y))
            assert d_x.dtype == dtype
            np.testing.assert_allclose(d_x, y + 2 * x, rtol=1e-6)
            _independent((d_x, *earlier), x, y)
            earlier.append(d_x)
        returned = gradient._run_hit((x, y))  # (of float32 arguments the code computes in float64: to finish)
        assert (returned.__class__ is Unfinished) == (dtype is np.float32)
        if returned.__class__ is not Unfinished:
            assert unwrapped(returned).dtype == dtype


def root_of_product(x, y):
    return math.sqrt(x * y)


def _entry_functions(gradient):
    """The functions a gradient's calls so far run (each carries the generated code's facts)."""
    return [built.function for built in gradient._by_kinds.values()]


def passed_through(x, y):
    return np.sum(x * y)


@s2s_ad.adjoint(passed_through)
def _(out, x, y, d_out):
    d_x = y  # (a rule handing back an argument itself: wrong unless d_out is 1, as in the test below)
    d_y = x


def through_rule(x, y):
    return passed_through(x, y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_proven_new_are_handed_out_without_a_comparison(backend, monkeypatch):
    """White-box: where the generated code returns only arrays it made (``sharing.fresh_returns``),
    the call hands them out without comparing them with the arguments (``handed_out`` is not called),
    and they are independent all the same; where a rule's adjoint returns an argument, the fact is
    not claimed and the comparison copies it."""
    from s2s_ad.targets import target as target_module
    compared = []
    real = target_module.NumPyTarget.handed_out

    def spy(self, values, held, copy_all=False):
        compared.append(values)
        return real(self, values, held, copy_all)

    monkeypatch.setattr(target_module.NumPyTarget, "handed_out", spy)
    gradient = s2s_ad.grad(weighted, wrt=(0, 1), backend=backend)
    a, b = np.arange(3.0), np.arange(3.0) + 5.0
    for _ in range(3):
        d_a, d_b = gradient(a, b)
        np.testing.assert_allclose(d_a, b + 2 * a)
        _independent((d_a, d_b), a, b)
    assert all(getattr(f, "fresh_returns", None) is True for f in _entry_functions(gradient))
    assert compared == []

    gradient = s2s_ad.grad(through_rule, wrt=(0, 1), backend=backend)
    for _ in range(3):
        d_x, d_y = gradient(a, b)
        np.testing.assert_array_equal(d_x, b)
        np.testing.assert_array_equal(d_y, a)
        _independent((d_x, d_y), a, b)
    assert all(getattr(f, "fresh_returns", None) is False for f in _entry_functions(gradient))
    assert len(compared) == 3


def merged_then_summed(x, y, flag):
    if flag > 0:
        s = x
    else:
        s = 2.0
    t = s + y
    return np.sum(t * t)


@pytest.mark.parametrize("backend", BACKENDS)
def test_adjoints_unbroadcast_from_one_array_are_handed_out_apart(backend):
    """``d_x = unbroadcast(d_t, s)`` and ``d_y = unbroadcast(d_t, y)``: of equal shapes, both are
    ``d_t`` itself (declared ``view=True``), so the code is not proven to return new arrays and the
    call copies one of them."""
    gradient = s2s_ad.grad(merged_then_summed, wrt=(0, 1), backend=backend)
    x, y = np.arange(3.0), np.arange(3.0) + 1.0
    for _ in range(3):
        d_x, d_y = gradient(x, y, 1.0)
        np.testing.assert_allclose(d_x, 2 * (x + y))
        np.testing.assert_allclose(d_y, 2 * (x + y))
        _independent((d_x, d_y), x, y)
    assert all(getattr(f, "fresh_returns", None) is False for f in _entry_functions(gradient))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("wrt", [0, (0,)])
def test_one_gradient_proven_new_is_handed_over_as_returned(backend, wrt, monkeypatch):
    """White-box: the gradient by one array, of code returning only arrays it made, is handed over
    as the code returned it (``Target.as_returned``: neither ``like`` nor the ownership check runs)
    where it is a writable array of the argument's dtype; of another dtype (a float32 argument run
    as Python by Numba, whose code may compute in float64) it takes ``like``.  Either way the
    numbers, the dtype and the independence from the arguments and from earlier results hold."""
    from s2s_ad.core import arguments
    from s2s_ad.targets import target as target_module
    liked = []

    def spy(primal, gradient):
        liked.append(gradient)
        return arguments.like(primal, gradient)

    monkeypatch.setattr(target_module.NumPyTarget, "like", staticmethod(spy))
    # The lane is for calls without the self-check (which compares each result with forward mode):
    # off for this gradient, also in CI's run with S2S_AD_CHECK=1; with it, no call takes the lane.
    monkeypatch.setenv("S2S_AD_CHECK", "0")
    checked = s2s_ad.grad(weighted, wrt=wrt, backend=backend, check=True)
    a, b = np.arange(3.0), np.arange(3.0) + 5.0
    for _ in range(3):
        checked(a, b)
    assert checked._hit((a, b))[2] is None
    liked.clear()
    gradient = s2s_ad.grad(weighted, wrt=wrt, backend=backend)
    for dtype in (np.float64, np.float32):
        a, b = np.arange(3.0, dtype=dtype), np.arange(3.0, dtype=dtype) + 5.0
        earlier = []
        for call in range(4):
            if call == 2:  # (the first calls build and find the entry: from the third on, the hot path)
                liked.clear()
            d_a = gradient(a, b)
            d_a = d_a[0] if isinstance(wrt, tuple) else d_a
            assert d_a.dtype == dtype
            np.testing.assert_allclose(d_a, b + 2 * a, rtol=1e-6)
            _independent((d_a, *earlier), a, b)
            earlier.append(d_a)
        if dtype is np.float64:
            assert liked == [] and gradient._hit((a, b))[2] is not None


def test_the_as_returned_test_passes_only_writable_arrays_of_the_arguments_dtype():
    """``NumPyTarget.as_returned``: true of a writable array of the primal's dtype (Numba's arrays
    carry dtype objects of their own: equal, not the same), false of a read-only one, of another
    dtype, of a subclass or of a number; no test for a primal that is not an array."""
    from s2s_ad.targets.target import NUMPY
    as_is = NUMPY.as_returned(np.zeros(3))
    namespace: dict = {}
    written_out = as_is.inline("result", namespace)  # (what a generated run writes in place of the call)

    def both(value):
        inline = eval(written_out, {**namespace, "result": value})  # noqa: S307 (the library's own text)
        assert bool(inline) == as_is(value)
        return as_is(value)

    assert both(np.ones(2)) and both(np.ones(2, dtype=np.dtype("<f8")))
    read_only = np.ones(2)
    read_only.flags.writeable = False
    for other in (read_only, np.ones(2, np.float32), np.ma.ones(2), 1.0, np.float64(1.0)):
        assert not both(other)
    assert NUMPY.as_returned(1.0) is None and NUMPY.as_returned(np.float64(1.0)) is None


@pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')")
@pytest.mark.self_check_off  # (a self-checked call has a result to finish: it takes the _hit path)
@pytest.mark.parametrize("with_arrays", [False, True])
def test_the_compiled_code_called_directly_hands_a_failure_to_the_checked_path(with_arrays, monkeypatch):
    """White-box: once a call has compiled and run the code, the hot path calls Numba's dispatcher
    itself (``checked.direct``); where that raises, ``checked`` runs the call as ever.  A failure of
    the compiled code alone (stood in for by a function that raises) still gives the right gradient,
    and the dispatcher is called directly again afterwards; the user's own error (an index out of
    range) is raised as Python raises it, and the next call's numbers are right.  A call of floats
    alone calls the overload's entry point before the dispatcher (``entry_points.py``): the same
    numbers as the dispatcher's; where it raises, the dispatcher's way runs the call."""
    monkeypatch.setenv("S2S_AD_CHECK", "0")

    def pick(x, k):
        return x[k] * x[0] + 3.0 * x[k]

    x = np.array([1.5, -2.0, 0.5]) if with_arrays else None
    if with_arrays:
        gradient = s2s_ad.grad(pick, wrt=0, backend="numba")
        call, expected = (lambda k: gradient(x, k)), (lambda k: np.eye(3)[k] * (x[0] + 3.0) + np.eye(3)[0] * x[k])
    else:
        gradient = s2s_ad.grad(poly, wrt=(0, 1), backend="numba")
        call, expected = (lambda y: gradient(1.5, float(y))), (lambda y: (2 * 1.5 * y + 3.0, 1.5 * 1.5))
    for _ in range(2):
        np.testing.assert_allclose(call(1), expected(1))
    run = next(iter(gradient._by_kinds.values())).function
    direct = run.checked.direct
    assert direct[0] is run.compiled  # (compiled and run: the hot path's call)
    stood_in = []

    def failing(*args):
        stood_in.append(args)
        raise RuntimeError("a failure of the compiled code alone")

    if not with_arrays:  # (a call of floats alone calls the overload's entry point first: entry_points.py)
        slot, defaults = run.checked.entry_slot((float, float))
        assert slot[0] is not None and defaults == (1.0,)
        assert slot[0](1.5, 3.0, *defaults) == run.compiled(1.5, 3.0)
        entry, slot[0] = slot[0], failing
        np.testing.assert_allclose(call(2), expected(2))  # (the entry raised: the dispatcher ran it)
        assert len(stood_in) == 1 and direct[0] is run.compiled
        slot[0] = None
        np.testing.assert_allclose(call(3), expected(3))
        slot[0] = entry
        stood_in.clear()
    direct[0] = failing
    np.testing.assert_allclose(call(2), expected(2))
    # (arrays: checked ran it, and it is direct again; floats: the entry point ran it, not the dispatcher)
    assert len(stood_in) == int(with_arrays) and direct[0] is (run.compiled if with_arrays else failing)
    if not with_arrays:
        slot[0] = None
        np.testing.assert_allclose(call(2), expected(2))
        assert len(stood_in) == 1 and direct[0] is run.compiled
    if with_arrays:
        with pytest.raises(IndexError):
            call(7)
    np.testing.assert_allclose(call(1), expected(1))
    assert run.state["run"] is run.compiled and direct[0] is run.compiled


def named_like_the_hot_calls_parameters(a0, hself, rest=1.0, kwargs=2.0):
    return a0 * hself * rest + kwargs * a0


@pytest.mark.self_check_off  # (a self-checked call has a result to finish: it takes the _hit path)
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_cached_call_of_numbers_is_one_generated_call_serving_only_its_own(backend):
    """White-box: once a call of numbers has its run (above), the gradient's own class calls the code
    in one generated function (``code_tables.use_hit``); a call of another count or type, with
    keywords or under a trace function goes the whole way, and gets the closed form's numbers.  The
    object stays a ``GradientFunction``, copied and pickled as one; an error the code raises names the
    user's line."""
    import copy
    import pickle
    import sys
    from s2s_ad.api.gradient import GradientFunction
    gradient = s2s_ad.grad(poly, wrt=(0, 1), backend=backend)
    full = GradientFunction.__call__
    assert gradient(3.0, 2.0) == pytest.approx((15.0, 9.0))
    assert gradient(3.0, 2.0) == pytest.approx((15.0, 9.0))
    assert type(gradient).__call__ is not full and isinstance(gradient, GradientFunction)

    class MyFloat(float):
        pass

    with pytest.raises(TypeError, match="too many positional arguments"):
        gradient(3.0, 2.0, 5.0)
    assert gradient(x=3.0, y=2.0) == pytest.approx((15.0, 9.0))
    assert gradient(3.0, y=2.0) == pytest.approx((15.0, 9.0))
    assert gradient(MyFloat(1.0), 2.0) == pytest.approx((7.0, 1.0))
    assert gradient(np.float64(1.0), 2.0) == pytest.approx((7.0, 1.0))
    with pytest.raises(TypeError, match="is an integer"):
        gradient(1, 2.0)
    assert gradient(2.0, 1.0) == pytest.approx((7.0, 4.0))
    before = sys.gettrace()
    sys.settrace(lambda frame, event, arg: None)
    try:
        assert gradient(2.0, 1.0) == pytest.approx((7.0, 4.0))
    finally:
        sys.settrace(before)
    for made in (copy.deepcopy(gradient), pickle.loads(pickle.dumps(gradient)), copy.copy(gradient)):
        assert type(made) is GradientFunction
        assert made(3.0, 2.0) == pytest.approx((15.0, 9.0))
    named = s2s_ad.grad(named_like_the_hot_calls_parameters, wrt=(0, 1, 2, 3), backend=backend)
    expected = (2.0 * 3.0 + 5.0, 7.0 * 3.0, 14.0, 7.0)
    for _ in range(3):
        assert named(7.0, 2.0, 3.0, 5.0) == pytest.approx(expected)
    assert named(7.0, hself=2.0, rest=3.0, kwargs=5.0) == pytest.approx(expected)
    assert named(a0=7.0, hself=2.0, kwargs=5.0, rest=3.0) == pytest.approx(expected)
    rooted = s2s_ad.grad(root_of_product, wrt=(0, 1), backend=backend)
    for _ in range(3):
        assert rooted(2.0, 8.0) == pytest.approx((1.0, 0.25))
    with pytest.raises(ValueError, match="math domain error") as raised:
        rooted(-2.0, 8.0)
    if sys.version_info >= (3, 11):  # (notes: Python 3.11 and later)
        assert any("generated from line" in note for note in raised.value.__notes__)
