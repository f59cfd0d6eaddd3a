"""Every refused construct raises TransformError naming the file, the line and the construct."""
import functools
import inspect
import pathlib
import re

import numpy as np
import pytest

import s2s_ad
import refused_functions

SOURCE = pathlib.Path(refused_functions.__file__).read_text().splitlines()
MARKERS = {}
for number, text in enumerate(SOURCE, start=1):
    if "# REFUSED:" in text:
        MARKERS.setdefault(number, text.split("# REFUSED:")[1].strip())


def _functions():
    cases = []
    for name, fn in inspect.getmembers(refused_functions, inspect.isfunction):
        if fn.__module__ != refused_functions.__name__ or name == "helper_without_rule_or_source" or name[0] == "_":
            continue
        start = fn.__code__.co_firstlineno
        end = start + len(inspect.getsourcelines(fn)[0])
        line = next(n for n in MARKERS if start <= n < end)
        cases.append(pytest.param(fn, line, MARKERS[line], id=name))
    return cases


@pytest.mark.parametrize("fn, line, words", _functions())
def test_refusal_names_file_line_and_construct(fn, line, words):
    with pytest.raises(s2s_ad.TransformError) as caught:
        s2s_ad.grad(fn)(np.ones(2))
    message = str(caught.value)
    assert re.search(rf"refused_functions\.py:{line}(:\d+)?: ", message), message
    assert words in message, message
    assert caught.value.line == line


def test_every_refusal_says_what_to_do_instead():
    for param in _functions():
        fn = param.values[0]
        with pytest.raises(s2s_ad.TransformError) as caught:
            s2s_ad.source(fn, args=(np.ones(2),))
        assert caught.value.hint, fn.__name__


def test_a_function_without_source_is_refused_clearly():
    namespace = {}
    exec("def typed_in(x):\n    return x * 2.0\n", namespace)
    with pytest.raises(s2s_ad.TransformError, match="source code cannot be read"):
        s2s_ad.grad(namespace["typed_in"])(1.0)


def test_a_builtin_is_refused_clearly():
    with pytest.raises(s2s_ad.TransformError, match="only plain Python functions"):
        s2s_ad.grad(len)([1.0])


def test_a_wrapper_of_a_builtin_is_refused_clearly():
    # An lru_cache around a ufunc has __wrapped__ but no code of its own: refused, not an AttributeError
    # from following the wrapper (found by the type check).
    with pytest.raises(s2s_ad.TransformError, match="only plain Python functions"):
        s2s_ad.grad(functools.lru_cache(maxsize=None)(np.sin))(1.0)


# Issue 33 (what a newcomer tripped on): errors speak of what the user wrote.

@pytest.mark.parametrize("make, what, name, kind", [
    (lambda: s2s_ad.jacobian(np.sin)(np.array([0.1, 0.2])), "jacobian", "np.sin", "ufunc"),
    (lambda: s2s_ad.grad(np.sin)(0.5), "grad", "np.sin", "ufunc"),
    (lambda: s2s_ad.grad(np.sum)(np.ones(2)), "grad", "np.sum", type(np.sum).__name__),  # (a def before NumPy 1.25)
    (lambda: s2s_ad.value_and_grad(abs)(0.5), "value_and_grad", "abs", "builtin_function_or_method"),
    (lambda: s2s_ad.jvp(np.sin, (0.5,), (1.0,)), "jvp", "np.sin", "ufunc"),
    (lambda: s2s_ad.vjp(np.sin, 0.5), "vjp", "np.sin", "ufunc"),
    (lambda: s2s_ad.hessian(np.sum)(np.ones(2)), "hessian", "np.sum", type(np.sum).__name__),
    (lambda: s2s_ad.check_grad(np.sin, 0.5), "check_grad", "np.sin", "ufunc"),
    (lambda: s2s_ad.source(np.sin), "source", "np.sin", "ufunc"),
], ids=["jacobian", "grad", "grad of np.sum", "value_and_grad", "jvp", "vjp", "hessian", "check_grad", "source"])
def test_a_numpy_function_or_builtin_given_to_the_api_says_to_wrap_it_in_a_def(make, what, name, kind):
    with pytest.raises(TypeError) as caught:  # (a TransformError too)
        make()
    assert isinstance(caught.value, s2s_ad.TransformError)
    assert str(caught.value) == (
        f"cannot differentiate {what} of {name}: {name} ({kind}) is no function written with def: only plain "
        f"Python functions defined with def can be transformed (s2s_ad reads their source); wrap it in one, "
        f"def f(x): return {name}(x), and differentiate f")


def test_wrapped_in_a_def_the_same_numpy_function_works():
    def sine(x):
        return np.sin(x)
    x = np.array([0.1, 0.2])
    np.testing.assert_allclose(s2s_ad.jacobian(sine)(x), np.diag(np.cos(x)))


def item_with_an_index(x):
    return x.item(2) * 2.0


def multiply_into(a, b):
    c = np.empty_like(a)
    np.multiply(a, b, out=c, where=a > 0)
    return np.sum(c)


def sine_into(a):
    c = np.empty_like(a)
    c = np.sin(a, out=c)
    return np.sum(c)


def _line(fn, offset):
    return f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno + offset}"


def test_a_method_with_more_arguments_than_its_rule_is_named_as_written():
    with pytest.raises(s2s_ad.TransformError) as caught:
        s2s_ad.grad(item_with_an_index)(np.array([0.1, 0.2, 0.3]))
    assert str(caught.value) == (
        f"{_line(item_with_an_index, 1)}:12: cannot differentiate the call of x.item: it passes 1 positional "
        "argument, and s2s_ad differentiates x.item() with none; read the element by its index instead: x[i, j], "
        "or np.ravel(x)[k] for the k-th in order")


def test_out_is_refused_saying_what_to_write_instead():
    with pytest.raises(s2s_ad.TransformError) as caught:
        s2s_ad.grad(multiply_into)(np.ones(2), np.ones(2))
    assert str(caught.value) == (
        f"{_line(multiply_into, 2)}:5: cannot differentiate np.multiply(..., out=c): out= (writing the result into "
        "an array that exists) is supported for a ufunc in a statement of its own, with no where= (np.exp(g, out=g)), "
        "not here; write c = np.multiply(a, b, where=a > 0) for a new array, or c[...] = np.multiply(a, b, "
        "where=a > 0) to write into c")
    with pytest.raises(s2s_ad.TransformError) as caught:
        s2s_ad.grad(sine_into)(np.ones(2))
    assert str(caught.value) == (
        f"{_line(sine_into, 2)}:9: cannot differentiate np.sin(..., out=c): out= (writing the result into "
        "an array that exists) is supported for a ufunc in a statement of its own, with no where= "
        "(np.exp(g, out=g)), not here; write c = np.sin(a) for a new array, or c[...] = np.sin(a) to write into c")
