"""Issue #12, "No silent wrong gradient": the front end (what a function means) and the caches.

Each test is one item of the issue: a gradient must be of the code that runs, now -- not of a
stale value, an old rule, an edited file, a decorator's inner function or the wrong nested def --
or the transformation must refuse with a TransformError that says why.  Oracles: closed forms and
central finite differences (conftest).
"""
import gc
import importlib
import os
import sys
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

def _generated_text_entries():
    import linecache
    return sum(1 for name in list(linecache.cache) if name.startswith("<s2s_ad "))


@pytest.mark.slow
def test_dropped_closures_are_freed():
    gc.collect()
    texts = _generated_text_entries()
    refs = []
    for k in range(50):
        fn = ff.make_closure(float(k))
        s2s_ad.grad(fn)(0.5)
        s2s_ad.vjp(fn, 0.5)[1](1.0)
        s2s_ad.jvp(fn, (0.5,), (1.0,))
        s2s_ad.grad(s2s_ad.grad(fn))(0.5)
        refs.append(weakref.ref(fn))
        recursive = ff.make_recursive(1.0 + k)
        assert s2s_ad.grad(recursive)(0.5, 3) == pytest.approx(numeric_grad(recursive, (0.5, 3), 0))
        refs.append(weakref.ref(recursive))
        del fn, recursive
    for _ in range(3):  # what a dropped cache entry held in cycles is found by the next collection
        gc.collect()
    assert [r for r in refs if r() is not None] == []
    # and the text of the code generated for them (each closure's constants differ) goes too
    assert _generated_text_entries() - texts < 10


# -- item 12: decorators that use functools.wraps ----------------------------

def test_a_decorated_function_is_differentiated_as_what_runs():
    # The wrapper doubles: d/dx 2 x^2 = 4 x (the undecorated function would give 2 x).
    assert s2s_ad.grad(ff.doubled_square)(1.5) == pytest.approx(6.0)
    assert_gradient_matches(ff.doubled_square, (1.5,))
    assert s2s_ad.jvp(ff.doubled_square, (1.5,), (1.0,)) == pytest.approx((4.5, 6.0))
    assert s2s_ad.vjp(ff.doubled_square, 1.5)[1](1.0)[0] == pytest.approx(6.0)


def test_a_decorated_helper_is_called_as_what_runs():
    assert_gradient_matches(ff.calls_decorated, (0.7,))


def test_lru_cache_and_cache_wrappers_are_transparent():
    x = 0.7
    assert s2s_ad.grad(ff.cached_wave)(x) == pytest.approx(np.cos(x) * x + np.sin(x))
    assert s2s_ad.grad(ff.cached_cube)(x) == pytest.approx(3 * x * x)
    assert s2s_ad.vjp(ff.cached_cube, x)[1](1.0)[0] == pytest.approx(3 * x * x)


def test_a_wrapper_that_passes_everything_through_is_transparent():
    assert s2s_ad.grad(ff.passed_cube)(2.0) == pytest.approx(12.0)
    # a pass-through around a wrapper that doubles: what runs is 2 x^2
    assert s2s_ad.grad(ff.passed_doubled)(1.5) == pytest.approx(6.0)
    assert s2s_ad.jvp(ff.passed_doubled, (1.5,), (1.0,)) == pytest.approx((4.5, 6.0))


def test_a_wrapper_that_cannot_be_differentiated_is_refused_naming_the_decorator():
    # It triples the result: differentiating the wrapped function alone would be wrong by 3x.
    with pytest.raises(s2s_ad.TransformError, match=r"as decorated .*wrapper.*__wrapped__"):
        s2s_ad.grad(ff.tripled_cube)(1.0)
    assert s2s_ad.grad(ff.tripled_cube.__wrapped__)(2.0) == pytest.approx(12.0)


def test_a_wrapper_with_other_parameter_names_is_refused():
    with pytest.raises(s2s_ad.TransformError, match="parameters"):
        s2s_ad.grad(ff.renamed_square)(1.0)


# -- item 13: a source file edited after its module was imported ------------

def _import_fresh(tmp_path, monkeypatch, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    importlib.invalidate_caches()
    return importlib.import_module(name), path


def _edit(path, text):
    path.write_text(text)
    stat = os.stat(path)
    os.utime(path, (stat.st_atime, stat.st_mtime + 10))  # a new time even on a coarse clock


def test_a_file_edited_after_import_is_refused_not_read(tmp_path, monkeypatch):
    before = "import numpy as np\n\ndef f(x):\n    return x * x\n\ndef g(x):\n    return f(x) + np.sin(x)\n"
    after = before.replace("x * x", "x * x * x")
    module, path = _import_fresh(tmp_path, monkeypatch, "front_edited_module", before)
    _edit(path, after)
    assert module.f(3.0) == 9.0  # Python runs the old code
    with pytest.raises(s2s_ad.TransformError, match="source file changed"):
        s2s_ad.grad(module.f)(3.0)
    with pytest.raises(s2s_ad.TransformError, match="source file changed"):
        s2s_ad.grad(module.g)(3.0)  # through a helper
    with pytest.raises(s2s_ad.TransformError, match="source file changed"):
        s2s_ad.jvp(module.f, (3.0,), (1.0,))
    module = importlib.reload(module)
    assert s2s_ad.grad(module.f)(3.0) == pytest.approx(27.0)
    assert s2s_ad.grad(module.g)(3.0) == pytest.approx(27.0 + np.cos(3.0))


def test_lines_added_above_a_function_after_import_read_it_where_it_is_now(tmp_path, monkeypatch):
    # The one def of h in the file's text now compiles to the code that runs (line numbers aside):
    # that text is read, where it is (as for a def IPython's autoreload compiled alone, below).
    before = "def f(x):\n    return x * x\n\ndef h(x):\n    return x * 4.0\n"
    module, path = _import_fresh(tmp_path, monkeypatch, "front_shifted_module", before)
    _edit(path, "def f(x):\n    return x * x\n\n\n\ndef h(x):\n    return x * 4.0\n")
    assert s2s_ad.grad(module.h)(1.0) == pytest.approx(4.0)
    assert "front_shifted_module.py:6" in s2s_ad.source(module.h)
    assert s2s_ad.grad(module.f)(3.0) == pytest.approx(6.0)  # unchanged where it is: still fine
    # two defs of h that would both do: which one ran cannot be told, so neither is read
    module, path = _import_fresh(tmp_path, monkeypatch, "front_shifted_twice", before)
    _edit(path, "def h(x):\n    return x * 4.0\n\ndef f(x):\n    return x * x\n\n\ndef h(x):\n    return x * 4.0\n")
    with pytest.raises(s2s_ad.TransformError, match="source file changed"):
        s2s_ad.grad(module.h)(1.0)



# -- a function's code and defaults replaced in place: what IPython's %autoreload does when the file of
# a module is edited (the old function objects get the new __code__ and __defaults__: code that holds
# them, a notebook's own functions and gradients, runs the new code) ---------------------------------

def _autoreload(module, path, text):
    """Edit the module's file, and give each of its functions the new code and defaults in place, as
    IPython's autoreload does (IPython.extensions.autoreload.update_function)."""
    _edit(path, text)
    fresh = {}
    exec(compile(text, str(path), "exec"), fresh)
    for name, new in fresh.items():
        old = getattr(module, name, None)
        if callable(new) and hasattr(new, "__code__") and hasattr(old, "__code__"):
            old.__code__, old.__defaults__ = new.__code__, new.__defaults__


_WAVE = "import numpy as np\n\ndef helper(x):\n    return np.sin(x) * x\n\ndef loss(x, a=2.0):\n" \
        "    return a * np.sum(helper(x) ** 2)\n"


def test_a_helper_whose_code_is_replaced_in_place_is_differentiated_as_it_runs_now(tmp_path, monkeypatch):
    module, path = _import_fresh(tmp_path, monkeypatch, "front_code_replaced_helper", _WAVE)
    x = np.array([0.3, 1.2])
    loss, by_scalar = s2s_ad.grad(module.loss), s2s_ad.value_and_grad(module.loss)
    np.testing.assert_allclose(loss(x), 4 * np.sin(x) * x * (np.cos(x) * x + np.sin(x)))
    assert by_scalar(0.5)[1] == pytest.approx(4 * np.sin(0.5) * 0.5 * (np.cos(0.5) * 0.5 + np.sin(0.5)))
    _autoreload(module, path, _WAVE.replace("np.sin(x) * x", "np.cos(x) * x"))
    want = 4 * np.cos(x) * x * (np.cos(x) - np.sin(x) * x)
    np.testing.assert_allclose(module.loss(x), 2 * np.sum((np.cos(x) * x) ** 2))  # Python runs the new code
    np.testing.assert_allclose(loss(x), want)  # the gradient taken before the edit
    np.testing.assert_allclose(s2s_ad.grad(module.loss)(x), want)  # and one taken after it
    assert by_scalar(0.5)[1] == pytest.approx(numeric_grad(module.loss, (0.5,), 0))
    assert s2s_ad.jvp(module.loss, (0.5,), (1.0,))[1] == pytest.approx(numeric_grad(module.loss, (0.5,), 0))


def test_a_function_whose_code_and_defaults_are_replaced_in_place_is_differentiated_as_it_runs_now(
        tmp_path, monkeypatch):
    module, path = _import_fresh(tmp_path, monkeypatch, "front_code_replaced_loss", _WAVE)
    x = np.array([0.3, 1.2])
    loss = s2s_ad.grad(module.loss)
    before = loss(x), loss(0.5), loss(x, 1.0)
    _autoreload(module, path, _WAVE.replace("** 2", "** 3").replace("a=2.0", "a=5.0"))
    for args in ((x,), (0.5,), (x, 1.0), (0.5, 1.0)):  # arrays and numbers, the default and not
        np.testing.assert_allclose(loss(*args), numeric_grad(module.loss, args, 0), rtol=1e-6)
    assert not np.allclose(loss(x), before[0]) and loss(0.5) != pytest.approx(before[1])
    # the parameters themselves renamed and reordered: wrt=0 is the first one, as for a new grad
    _autoreload(module, path, _WAVE.replace("loss(x, a=2.0)", "loss(a, x=0.5)"))
    assert loss(3.0) == pytest.approx((np.sin(0.5) * 0.5) ** 2)  # d/da of a * helper(x) ** 2
    assert loss(3.0, 0.25) == pytest.approx((np.sin(0.25) * 0.25) ** 2)



def _deduperreload(module, path, text):
    """Edit the module's file, and patch each of its functions as IPython 9's %autoreload does by
    default (IPython.extensions.deduperreload): the text of each def compiled alone, under the
    module's file name, so that its code says line 1 of the file whatever line the def is on."""
    import ast
    _edit(path, text)
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef):
            fresh = {}
            exec(compile(ast.unparse(node), str(path), "exec", dont_inherit=True), vars(module), fresh)
            old = getattr(module, node.name)
            old.__code__, old.__defaults__ = fresh[node.name].__code__, fresh[node.name].__defaults__


def test_a_def_compiled_alone_by_autoreload_is_read_where_it_is_in_the_file(tmp_path, monkeypatch):
    module, path = _import_fresh(tmp_path, monkeypatch, "front_compiled_alone", _WAVE)
    x = np.array([0.3, 1.2])
    loss = s2s_ad.grad(module.loss)
    loss(x)
    _deduperreload(module, path, _WAVE.replace("np.sin(x) * x", "np.cos(x) * x").replace("a=2.0", "a=3.0"))
    assert module.helper.__code__.co_firstlineno == 1  # not where the def is
    np.testing.assert_allclose(loss(x), 6 * np.cos(x) * x * (np.cos(x) - np.sin(x) * x))
    np.testing.assert_allclose(loss(x), numeric_grad(module.loss, (x,), 0), rtol=1e-6)
    # a refusal in the edited def names its line in the file
    edited = _WAVE.replace("    return np.sin(x) * x\n", "    while x > 0:\n        x = x - 1.0\n    else:\n"
                                                           "        x = x * 2.0\n    return x\n")
    _deduperreload(module, path, edited)
    with pytest.raises(s2s_ad.TransformError, match=r"front_compiled_alone\.py:4:.*else clause on a while"):
        s2s_ad.grad(module.helper)(1.5)


# -- item 8: a nested def redefined inside a branch or a loop ----------------

@pytest.mark.parametrize("flag, value, slope", [(1, 8.0, 12.0), (-1, 4.0, 4.0)])
def test_the_call_after_a_branch_uses_the_def_live_on_the_path_taken(flag, value, slope):
    assert s2s_ad.value_and_grad(ff.redefined_in_branch)(2.0, flag) == pytest.approx((value, slope))
    assert s2s_ad.jvp(ff.redefined_in_branch, (2.0, flag), (1.0, None)) == pytest.approx((value, slope))


@pytest.mark.parametrize("flag", [True, False])
def test_a_def_in_each_branch(flag):
    assert_gradient_matches(ff.defined_in_both_branches, (0.8, flag))


def test_a_def_redefined_in_a_loop_body_is_called_as_python_would():
    # 2 + 4 + 4 at x = 2; d/dx: 1 + 4 + 4
    assert s2s_ad.value_and_grad(ff.redefined_in_loop_body)(2.0) == pytest.approx((10.0, 9.0))
    assert_gradient_matches(ff.redefined_in_loop_body, (1.3,))


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_a_def_chosen_in_a_branch_inside_a_loop(n):
    assert_gradient_matches(ff.chosen_in_loop_branch, (0.6, n))


@pytest.mark.parametrize("x", [0.9, 2.0])
def test_a_def_redefined_in_a_while_loop(x):
    assert_gradient_matches(ff.redefined_in_while, (x, 4))


@pytest.mark.parametrize("flag, slope", [(True, 4.0), (False, 3.0)])
def test_an_alias_of_a_redefined_def(flag, slope):
    assert s2s_ad.grad(ff.aliased_after_branch)(2.0, flag) == pytest.approx(slope)


def test_a_redefined_def_on_arrays():
    w = np.array([1.0, 2.0])
    assert s2s_ad.grad(ff.array_def_redefined)(1.5, w) == pytest.approx(2 * 1.5 * np.sum(w))
    assert s2s_ad.grad(ff.array_def_redefined, wrt=1)(1.5, w) == pytest.approx([2.25, 2.25])


def test_a_def_bound_on_one_path_only_is_refused_saying_so():
    with pytest.raises(s2s_ad.TransformError, match="defined on some paths only"):
        s2s_ad.grad(ff.defined_on_one_path_only)(1.0, True)


def test_a_name_that_is_a_def_on_one_path_and_a_value_on_another_is_fine_unless_called():
    assert s2s_ad.grad(ff.unused_value_or_def)(1.5, True) == pytest.approx(3.0)


def test_a_class_attribute_read_by_a_helper_is_seen_by_its_caller(restore_front_values):
    g = s2s_ad.grad(ff.calls_helper_reading_class)
    assert g(0.6) == pytest.approx(numeric_grad(ff.calls_helper_reading_class, (0.6,), 0))
    ff.Cfg.K = -3.0
    assert g(0.6) == pytest.approx(numeric_grad(ff.calls_helper_reading_class, (0.6,), 0))
    assert s2s_ad.jvp(ff.calls_helper_reading_class, (0.6,), (1.0,))[1] == pytest.approx(
        numeric_grad(ff.calls_helper_reading_class, (0.6,), 0))


def test_a_rule_given_to_a_helper_differentiated_from_its_source_is_picked_up():
    g = s2s_ad.grad(ff.calls_plain_helper)
    assert g(2.0) == pytest.approx(13.0)

    def scaled_rule(out, x, d_out):
        d_x = d_out * 10.0  # not the derivative, so that using it shows

    s2s_ad.adjoint(ff.plain_helper)(scaled_rule)
    try:
        assert g(2.0) == pytest.approx(11.0)
        assert not s2s_ad.check_grad(ff.calls_plain_helper, 2.0).ok
    finally:
        s2s_ad.adjoint(ff.plain_helper)(_cube_rule)
    assert g(2.0) == pytest.approx(13.0)


def _cube_rule(out, x, d_out):
    d_x = d_out * 3.0 * x * x


@pytest.mark.parametrize("flag", [True, False])
def test_a_redefined_def_called_from_a_comprehension_another_def_and_itself(flag):
    assert_gradient_matches(ff.nested_call_inside_comprehension_and_helper, (0.7, flag))


def test_passing_a_nested_function_to_a_helper_is_refused_with_the_true_reason():
    with pytest.raises(s2s_ad.TransformError, match="passing a nested function as 'f'"):
        s2s_ad.grad(ff.passes_nested_function)(0.7, True)
