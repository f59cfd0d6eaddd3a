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
