"""The cache never serves code built for names that mean something else now.

Generated code inlines module constants and calls the adjoints of helpers as
they were; each cached entry keeps a snapshot of what its free names meant
(globals, closure cells, builtins not shadowed) and is built again when the
snapshot no longer holds.  In-place changes to a global array need no
rebuild: the code reads the array itself.
"""
import gc
import threading

import numpy as np
import pytest

import s2s_ad
import cache_functions as cf


def test_a_rebound_global_constant_is_seen(monkeypatch):
    df = s2s_ad.grad(cf.scaled)
    assert df(2.0) == pytest.approx(12.0)
    monkeypatch.setattr(cf, "SCALE", 5.0)
    assert df(2.0) == pytest.approx(20.0)
    assert s2s_ad.value_and_grad(cf.scaled)(2.0) == pytest.approx((20.0, 20.0))
    assert s2s_ad.jvp(cf.scaled, (2.0,), (1.0,)) == pytest.approx((20.0, 20.0))


def test_an_equal_value_keeps_the_cached_code(monkeypatch):
    df = s2s_ad.grad(cf.scaled)
    df(2.0)
    before = df._by_types[(float,)]
    monkeypatch.setattr(cf, "SCALE", float("3.0"))  # a new object, equal to the old one
    df(2.0)
    assert df._by_types[(float,)] is before


def test_a_global_array_changed_in_place_or_rebound(monkeypatch):
    x = np.array([1.0, 1.0])
    df = s2s_ad.grad(cf.weighted)
    np.testing.assert_allclose(df(x), [2.0, 4.0])
    monkeypatch.setattr(cf, "WEIGHTS", np.array([3.0, 1.0]))
    np.testing.assert_allclose(df(x), [6.0, 2.0])
    cf.WEIGHTS[1] = 10.0
    np.testing.assert_allclose(df(x), [6.0, 20.0])


def test_a_redefined_helper_is_seen(monkeypatch):
    df = s2s_ad.grad(cf.calls_helper)
    assert df(3.0) == pytest.approx(18.0)

    def cubed(x):
        return x * x * x

    monkeypatch.setattr(cf, "helper", cubed)
    assert df(3.0) == pytest.approx(81.0)
    assert s2s_ad.vjp(cf.calls_helper, 3.0)[1](1.0) == pytest.approx((81.0,))
    assert s2s_ad.jvp(cf.calls_helper, (3.0,), (1.0,))[1] == pytest.approx(81.0)


def test_a_changed_closure_cell_is_seen():
    scaled_by_k, set_k = cf.make_closure()
    df = s2s_ad.grad(scaled_by_k)
    assert df(2.0) == pytest.approx(8.0)
    set_k(5.0)
    assert df(2.0) == pytest.approx(20.0)


def test_a_builtin_shadowed_later_is_seen(monkeypatch):
    df = s2s_ad.grad(cf.uses_abs)
    assert df(-2.0) == pytest.approx(4.0)  # d/dx |x| x = 2 |x|

    def square(v):
        return v * v

    monkeypatch.setattr(cf, "abs", square, raising=False)  # now uses_abs(x) = x ** 3
    assert df(-2.0) == pytest.approx(12.0)


def test_threads_asking_at_once_get_one_correct_gradient():
    def work(results, i):
        results[i] = s2s_ad.grad(cf.scaled)(float(i))

    results = [None] * 8
    threads = [threading.Thread(target=work, args=(results, i)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == pytest.approx([2 * cf.SCALE * i for i in range(8)])


def _refused(x):
    exec("y = 1")
    return x


@pytest.mark.parametrize("enabled", [True, False])
def test_the_garbage_collector_is_as_it_was_after_a_transformation(enabled):
    """Transformations pause the cycle collector (pipeline.collector_paused), then leave it as they found it,
    even when a build fails."""
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        s2s_ad.source(cf.calls_helper, args=(2.0,))  # a helper: a build inside a build
        with pytest.raises(s2s_ad.TransformError):
            s2s_ad.grad(_refused)(1.0)
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
