"""Issue #12, "No silent wrong gradient": the front end (what a function means) and the caches.

Each test is one item of the issue: a gradient must be of the code that runs, now -- not of a
stale value, an old rule, an edited file, a decorator's inner function or the wrong nested def --
or the transformation must refuse with a TransformError that says why.  Oracles: closed forms and
central finite differences (conftest).
"""
import gc
import threading
import weakref

import numpy as np
import pytest

import s2s_ad
from conftest import assert_gradient_matches, numeric_grad
import front_config
import front_functions as ff


# -- item 14: stale results ---------------------------------------------------

@pytest.fixture
def restore_front_values():
    saved = (front_config.K, ff.Cfg.K, ff.SIGN)
    yield
    front_config.K, ff.Cfg.K, ff.SIGN = saved


def test_module_attribute_rebound_is_seen_by_old_and_new_gradients(restore_front_values):
    g = s2s_ad.grad(ff.scaled_by_module)
    assert g(1.5) == pytest.approx(2 * 2.0 * 1.5)
    front_config.K = 5.0
    assert g(1.5) == pytest.approx(2 * 5.0 * 1.5)
    assert s2s_ad.grad(ff.scaled_by_module)(1.5) == pytest.approx(2 * 5.0 * 1.5)
    assert_gradient_matches(ff.scaled_by_module, (1.5,))


def test_class_attribute_rebound_is_seen(restore_front_values):
    g = s2s_ad.grad(ff.scaled_by_class)
    assert g(1.5) == pytest.approx(6.0)
    ff.Cfg.K = 5.0
    assert g(1.5) == pytest.approx(15.0)
    assert s2s_ad.value_and_grad(ff.scaled_by_class)(1.5) == pytest.approx((5.0 * 2.25, 15.0))
    assert s2s_ad.jvp(ff.scaled_by_class, (1.5,), (1.0,))[1] == pytest.approx(15.0)


def test_global_rebound_from_zero_to_negative_zero_counts_as_changed(restore_front_values):
    g = s2s_ad.grad(ff.signed)
    assert g(2.0) == pytest.approx(np.pi)
    ff.SIGN = -0.0
    assert g(2.0) == pytest.approx(-np.pi)
    assert g(2.0) == pytest.approx(numeric_grad(ff.signed, (2.0,), 0))


def test_a_rule_registered_again_replaces_the_cached_code():
    def rule_three(out, x, d_out):
        d_x = d_out * 3.0 * np.cos(x)

    def rule_seven(out, x, d_out):
        d_x = d_out * 7.0

    s2s_ad.adjoint(ff.ruled)(rule_three)
    g = s2s_ad.grad(ff.calls_ruled)
    assert g(0.0) == pytest.approx(9.0)
    s2s_ad.adjoint(ff.ruled)(rule_seven)  # a wrong rule, on purpose: check_grad must now say so
    assert g(0.0) == pytest.approx(21.0)
    assert s2s_ad.grad(ff.calls_ruled)(0.0) == pytest.approx(21.0)
    assert not s2s_ad.check_grad(ff.calls_ruled, 0.0).ok
    s2s_ad.adjoint(ff.ruled)(_right_rule)
    assert s2s_ad.check_grad(ff.calls_ruled, 0.4).ok


def _right_rule(out, x, d_out):
    d_x = d_out * np.cos(x)


# -- crash list: threads ------------------------------------------------------

def test_threads_building_the_same_vjp_and_helper_at_once_all_get_a_finished_one():
    # One fresh closure per run, so that the cache is empty and every thread races to build it.
    fn = ff.make_pair(1.25)
    n = 8
    barrier = threading.Barrier(n)
    results, errors = [None] * n, []

    def work(k):
        barrier.wait()
        try:
            _, pull = s2s_ad.vjp(fn, 0.7)
            results[k] = pull(1.0)[0]
        except Exception as exc:  # collected: a thread's exception would otherwise be lost
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    expected = numeric_grad(fn, (0.7,), 0)
    assert results == pytest.approx([expected] * n, rel=1e-6)


# -- crash list: memory -------------------------------------------------------

def test_dropped_closures_are_freed():
    refs = []
    for k in range(50):
        fn = ff.make_closure(float(k))
        s2s_ad.grad(fn)(0.5)
        s2s_ad.vjp(fn, 0.5)[1](1.0)
        s2s_ad.jvp(fn, (0.5,), (1.0,))
        s2s_ad.grad(s2s_ad.grad(fn))(0.5)
        refs.append(weakref.ref(fn))
        del fn
    gc.collect()
    assert [r for r in refs if r() is not None] == []
