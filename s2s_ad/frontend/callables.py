"""What a callable met in user code is, what it is called, and whether a call of it is refused.

Input: a Python callable (and, for ``check_callee``, a call's converted
arguments).  Output: how a user spells it (``describe_callable``), whether it
is the user's own code to transform (``is_user_function``) or a library's
(``library_code``), why it cannot be differentiated (``missing_rule``: None if
it can), and ``check_callee``'s located ``TransformError`` for a call that must
be refused before anything runs (nothing if the call may stand).
"""
from __future__ import annotations

import os
import sys
import types
from typing import Any, Optional

import numpy as np

from ..core import containers, ir, language
from ..rules import registry as rules
from ..rules.rule import ArgumentMismatch, bind_arguments
from .conversion import ErrorBuilder, hashable, spelled
from ..core.draws import unseeded
from ..core.errors import TransformError
from .parse import parse_function
from .snapshot import Snapshot
from .source import readable_source


def describe_callable(fn: Any) -> str:
    """``np.sin``, ``math.sin``, ``mymodule.helper``, ``scipy.special.iv``, ``scipy.stats.norm.pdf``:
    how a user would spell ``fn``."""
    home = _public_home(fn)
    if home is not None:
        return home
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    module = language.module_of(fn)
    module = {**language.USER_SPELLINGS, "builtins": "", "_operator": "operator"}.get(module, module)
    return f"{module}.{name}" if module else name


def _public_home(fn: Any) -> Optional[str]:
    """Where a library's function is found under a public name, for the ones whose ``__module__``
    does not say it: a ufunc of SciPy's (it has none, and would read as NumPy's: ``np.iv``), one
    defined in a private module (``scipy.special._basic.polygamma`` is ``scipy.special.polygamma``),
    a method of an object a library's module holds (``scipy.stats.norm.pdf``).  None: the plain
    spelling is right.  Only modules already imported are looked in; a few lookups each."""
    name = getattr(fn, "__name__", None)
    if not isinstance(name, str):
        return None
    owner = getattr(fn, "__self__", None)
    if owner is not None and not isinstance(owner, types.ModuleType) and not isinstance(fn, types.BuiltinFunctionType):
        held = _held_name(owner)  # a method of a library's object (scipy.stats.norm)
        return f"{held}.{name}" if held is not None else None
    if language.is_ufunc(fn):
        numpy = sys.modules.get("numpy")
        if numpy is not None and getattr(numpy, name, None) is fn:
            return None  # np.sin: the plain spelling
        for module_name in _UFUNC_HOMES:
            module = sys.modules.get(module_name)
            if module is not None and getattr(module, name, None) is fn:
                return f"{module_name}.{name}"
        return None
    defined_in = getattr(fn, "__module__", None)
    if not isinstance(defined_in, str) or "._" not in defined_in:
        return None
    parts = defined_in.split(".")
    while len(parts) > 1:  # scipy.special._basic -> scipy.special
        parts.pop()
        if parts[-1].startswith("_"):
            continue
        module = sys.modules.get(".".join(parts))
        if module is not None and getattr(module, name, None) is fn:
            return f"{'.'.join(parts)}.{name}"
    return None


# The public modules of a library's ufuncs that are not NumPy's, looked in for their names.
_UFUNC_HOMES = ("scipy.special",)


def _held_name(owner: Any) -> Optional[str]:
    """``scipy.stats.norm``: the public name of an object a library's public module holds as an
    attribute named by the object's own ``name`` or by its class's (SciPy's distributions), or None."""
    module_name = getattr(type(owner), "__module__", None)
    if not isinstance(module_name, str):
        return None
    # (multivariate_normal has no name of its own: its class is multivariate_normal_gen)
    names = [n for n in (getattr(owner, "name", None), type(owner).__name__.removesuffix("_gen")) if isinstance(n, str)]
    parts = module_name.split(".")
    while parts:
        module = sys.modules.get(".".join(parts))
        if module is not None and not parts[-1].startswith("_"):
            for held in names:
                if getattr(module, held, None) is owner:
                    return f"{'.'.join(parts)}.{held}"
        parts.pop()
    return None


def made_by_s2s_ad(value: Any) -> bool:
    """Whether ``value`` is an object of one of s2s_ad's own classes (a gradient function, a rule).  A
    Cython type's ``__module__`` is a descriptor, not a string, on Python 3.10 (``np.random.default_rng``):
    such a type is no one of ours."""
    module = getattr(type(value), "__module__", None)
    return isinstance(module, str) and (module == "s2s_ad" or module.startswith("s2s_ad."))


def is_user_function(fn: Any) -> bool:
    """A plain Python function with no rule: transformed and called through its own adjoint."""
    return isinstance(fn, types.FunctionType) and not rules.is_known(fn)


# The methods of a scipy.stats distribution that have rules for some distributions (templates/scipy_stats.py).
DISTRIBUTION_METHODS = frozenset({"pdf", "logpdf", "cdf", "logcdf", "sf", "logsf", "pmf", "logpmf", "ppf", "isf",
                                  "entropy"})


def scipy_distribution(fn: Any) -> Optional[str]:
    """``"scipy.stats.norm"`` for one of scipy.stats's distribution objects (``stats.norm``, an
    instance whose call freezes it), else None.  SciPy is not imported here."""
    cls = type(fn)
    if not str(getattr(cls, "__module__", "")).startswith("scipy.stats") or isinstance(
            fn, (type, types.FunctionType, types.MethodType, types.BuiltinFunctionType)) or not callable(fn):
        return None
    if not (hasattr(fn, "pdf") or hasattr(fn, "pmf")):
        return None
    name = getattr(fn, "name", None)
    if not isinstance(name, str):
        name = cls.__name__[:-len("_gen")] if cls.__name__.endswith("_gen") else cls.__name__
    return f"scipy.stats.{name}"


def frozen_distribution(owner: Any) -> Optional[str]:
    """``"scipy.stats.norm"`` for a frozen scipy.stats distribution (``stats.norm(0.0, 2.0)``), else None."""
    cls = type(owner)
    if not (str(getattr(cls, "__module__", "")).startswith("scipy.stats") and "frozen" in cls.__name__):
        return None
    for attribute in ("dist", "_dist"):
        name = scipy_distribution(getattr(owner, attribute, None))
        if name is not None:
            return name
    return f"scipy.stats.{cls.__name__.replace('_frozen', '')}"


def frozen_refusal(name: str) -> str:
    """What to write instead of a frozen distribution of ``name`` (``"scipy.stats.norm"``)."""
    return (f"s2s_ad differentiates the methods of {name} itself, its parameters passed to each call, not those "
            f"of a frozen distribution; write {name}.logpdf(x, <its parameters>) instead of "
            f"{name}(<its parameters>).logpdf(x) (scipy.stats.norm.logpdf(x, loc, scale) for "
            "scipy.stats.norm(loc, scale).logpdf(x)), and so for pdf, cdf, logcdf, sf, logsf, pmf and logpmf")


def missing_rule(fn: Any) -> Optional[str]:
    """Why a call of ``fn`` whose arguments depend on the inputs cannot be differentiated: it has
    no rule and no source to transform.  None if it can be."""
    if rules.is_known(fn) or not callable(fn) or hasattr(fn, "function_for"):
        return None
    name = describe_callable(fn)
    owner = getattr(fn, "__self__", None)
    frozen = frozen_distribution(owner)
    if frozen is not None:  # D.logpdf(x) of a module-level D = stats.norm(0.0, 2.0)
        return frozen_refusal(frozen)
    if isinstance(getattr(fn, "__func__", None), types.FunctionType) and not isinstance(owner, types.ModuleType):
        return (f"it is a method of a {type(owner).__name__} object, and methods are not differentiated; "
                f"write the computation as a def that takes the object's numbers as arguments")
    if isinstance(fn, type) and not language.is_library_scalar_type(fn) and fn.__module__ != "builtins":
        return (f"{name} is a class, and objects are not differentiated; pass their numbers to the function "
                f"as arguments")
    if is_user_function(fn):
        if not readable_source(fn):
            return f"its source cannot be read and it has no derivative rule; add one with @s2s_ad.adjoint({name})"
        return _library_source_refused(fn, name)
    return f"it has no derivative rule; add one with @s2s_ad.adjoint({name}) (see docs/rules.md, 'Adding a rule')"


def _library_source_refused(fn: types.FunctionType, name: str) -> Optional[str]:
    """Why a library's function (SciPy's, the standard library's: installed, not the user's) with no
    rule cannot be transformed from its source, if its source is outside the subset; None if it is
    in it.  The refusal then names the user's call and the missing rule, not a line of the library."""
    if not library_code(fn):
        return None
    try:
        parse_function(fn)
    except TransformError as exc:
        where = f"{os.path.basename(exc.filename or '?')}:{exc.line}"
        return (f"it has no derivative rule, and its source cannot be differentiated ({exc.construct} at "
                f"{where}); add a rule with @s2s_ad.adjoint({name}) (see docs/rules.md, 'Adding a rule')")
    return None


def library_code(fn: Any) -> bool:
    """Whether ``fn`` was defined in an installed package or Python's standard library."""
    filename = getattr(getattr(fn, "__code__", None), "co_filename", "")
    return bool(filename) and containers.library_file(filename)


def reports(fn: Any) -> bool:
    """Whether ``fn`` only reports (prints, logs, warns): what may be called for its effect.  Declared
    ``reports=True`` in templates/ (``print``, ``logging.info``), or a method whose class, or a class
    it derives from, declares its method of that name so (``LOG.info`` for a ``logging.Logger``)."""
    if rules.fact(fn, "reports"):
        return True
    owner, name = getattr(fn, "__self__", None), getattr(fn, "__name__", None)
    if owner is None or isinstance(owner, types.ModuleType) or not isinstance(name, str):
        return False
    return any(rules.fact(vars(cls).get(name), "reports") for cls in type(owner).__mro__)


# What to write instead of a method call with more arguments than s2s_ad's rule for it takes.
_METHOD_HINTS = {"item": "; read the element by its index instead: x[i, j], or np.ravel(x)[k] for the k-th in order"}


def _method_as_written(fn: Any, node: Any) -> Optional[str]:
    """``x.item`` where the call ``x.item(...)`` is of a helper of s2s_ad's standing for the method (its
    name internal, ``s2s_ad.core.runtime.item``); None for any other call."""
    func = getattr(node, "func", None)
    if func is None or type(func).__name__ != "Attribute" or not language.module_of(fn).startswith("s2s_ad"):
        return None
    return spelled(func)


# NumPy's functions of two arrays whose result an operator writes (np.multiply(a, b) is a * b).
_OPERATORS = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "true_divide": "/", "power": "**",
              "matmul": "@", "floor_divide": "//", "mod": "%", "remainder": "%"}


def refuse_out(fn: Any, node: Any, error: ErrorBuilder) -> None:
    """Refuse a library function's call with ``out=`` (``np.multiply(a, b, out=c)``), saying so and what to
    write instead (``c = a * b``, or ``c[...] = a * b`` to write into ``c``); a function of the user's
    may well have a parameter named ``out``."""
    keywords = getattr(node, "keywords", None) or []
    out = next((k.value for k in keywords if k.arg == "out"), None)
    if out is None or is_user_function(fn):
        return
    func = spelled(node.func)
    operands = [spelled(a) for a in node.args]
    symbol = _OPERATORS.get(getattr(fn, "__name__", ""))
    rest = ", ".join(operands + [f"{k.arg}={spelled(k.value)}" for k in keywords if k.arg != "out"])
    result = f" {symbol} ".join(operands) if symbol and len(operands) == 2 and len(keywords) == 1 else f"{func}({rest})"
    target = spelled(out)
    where = ("is supported for a ufunc in a statement of its own, with no where= (np.exp(g, out=g)), not here"
             if isinstance(fn, np.ufunc) and fn.nout == 1 else "is not supported")
    raise error(f"{func}(..., out={target})", f"out= (writing the result into an array that exists) {where}; write "
                f"{target} = {result} for a new array, or {target}[...] = {result} to write into {target}", node)


def check_callee(fn: Any, node: Any, args: tuple, kwargs: tuple, error: ErrorBuilder, snapshot: Snapshot) -> None:
    """Refuse, before anything runs, a call whose callee cannot be differentiated as called: a
    generator made without a seed, a function declared refused (print, eval) or refusing these
    arguments, arguments its rule cannot bind, a gradient of s2s_ad (reverse over reverse), a class
    of Python code."""
    refuse_out(fn, node, error)
    method = _method_as_written(fn, node)  # x.item(2): a method s2s_ad's helper stands for, named as written
    name = method or describe_callable(fn)
    if hashable(fn):
        snapshot.record_rules(fn)  # a rule registered later must be picked up
    seed_keyword = rules.fact(fn, "seeded_by")
    seeds = list(args[:1]) + [v for k, v in kwargs if k == seed_keyword]
    if unseeded(seed_keyword, len(args), tuple(k for k, _ in kwargs),
                any(isinstance(v, ir.Const) and v.value is None for v in seeds)):
        raise error(f"{name}() without a seed", "a generator made from fresh entropy draws other "
                    "numbers in each pass of a derivative (the self-check, hessian, jacobian), which "
                    "nothing can replay; give it a seed, or make it outside the function and pass it "
                    "in as an argument (its draws are replayed)", node)
    refusal = rules.fact(fn, "refused")  # declared in templates/ (print, eval), with what to do instead
    if refusal:
        raise error(f"the call of {name}", refusal, node)
    distribution = scipy_distribution(fn)
    if distribution is not None and not rules.is_known(fn):  # stats.norm(loc, scale): frozen
        raise error(f"the frozen distribution {distribution}(...)", frozen_refusal(distribution), node)
    rule = rules.adjoint_rule(fn) or rules.tangent_rule(fn)
    if rule is not None:
        if method is not None and len(args) > rule.positional:  # (args: the object first)
            most = rule.positional - 1
            raise error(f"the call of {method}", f"it passes {len(args) - 1} positional argument"
                        f"{'s' if len(args) != 2 else ''}, and s2s_ad differentiates {method}() with "
                        f"{'none' if most == 0 else f'at most {most}'}" + _METHOD_HINTS.get(method.rpartition('.')[2], ""),
                        node)
        try:
            bind_arguments(rule, args, kwargs)
        except ArgumentMismatch as exc:
            raise error(f"the call of {name}", f"it passes {exc}", node) from None
        refusal = rules.argument_refusal(fn, tuple(constant_or_not(a) for a in args),
                                         tuple((k, constant_or_not(v)) for k, v in kwargs))
        if refusal:
            raise error(f"the call of {name}", refusal, node)
        return
    if rules.is_nondifferentiable(fn):
        return
    if hasattr(fn, "function_for"):  # an s2s_ad gradient, called inside a differentiated function
        raise error(f"the call of the gradient {fn!r}", "differentiating a gradient in reverse mode would "
                    "be reverse over reverse, which s2s_ad does not do; take higher derivatives with "
                    "grad(grad(f)), s2s_ad.hessian or s2s_ad.jvp of the gradient", node)
    if isinstance(fn, type) and isinstance(getattr(fn, "__init__", None), types.FunctionType) \
            and not rules.is_known(fn) and not builtin_type(fn):  # a class of Python code
        raise error(f"making a {fn.__name__} object", "only dicts, lists, tuples, namedtuples and "
                    "dataclasses (whose fields are known) can be made in a differentiated function "
                    f"({fn.__name__} is a class, and objects are not differentiated); make the object "
                    "outside it and differentiate its method (s2s_ad.grad(obj.loss)), which reads its attributes", node)
    # A function with no rule and no source is refused only if an argument depends on the inputs
    # (checks.check_constant_calls): otherwise it is a constant and simply runs.


def builtin_type(cls: type) -> bool:
    """Python's and NumPy's own types (``np.float32(2.0)``, ``complex(1, 2)``): a call of one that does
    not depend on the inputs is a constant and simply runs, as any function's does."""
    return cls.__module__ == "builtins" or language.is_library_scalar_type(cls)


def constant_or_not(expr: Any) -> Any:
    """The value of a constant argument (a number, a string, a function named in the call), else
    ``rules.NOT_CONSTANT``."""
    return expr.value if isinstance(expr, ir.Const) else rules.NOT_CONSTANT
