"""A rule: its template parsed and checked, and a call's arguments bound to its inputs.

Input: a template (a function written as the module docstring of registry.py
says: the primal result, the inputs, then the incoming adjoint or the input
tangents; a body of assignments) and the function it is a rule for.  Output: a
``Rule`` (``_parse_template``), its body parsed at once or, for s2s_ad's own
template modules, at its first use (``_LazyRule``), or a ``TransformError``
naming the template's file and line where it is not written as a rule is.
``bind_arguments`` matches a call's arguments to a rule's inputs, defaults
filled in (``is_default``), or raises ``ArgumentMismatch``.  Which function has
which rule is registry.py's.
"""
from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import gast

from ..core.errors import TransformError


_RULE_TEMPLATES: set = set()  # the template functions of the rules declared, told apart from helpers


@dataclass
class Rule:
    """One adjoint or tangent template."""

    fn: Any
    kind: str  # "adjoint" or "tangent"
    name: str
    result: str
    inputs: tuple[str, ...]  # primal inputs, in positional order
    positional: int  # how many of ``inputs`` may be passed by position
    defaults: dict[str, Any]
    seeds: tuple[str, ...]  # d_out, or t_<input> for each input
    body: list  # gast statements
    namespace: dict[str, Any] = field(repr=False)  # the template module's globals
    filename: str
    line: int
    elementwise: bool = False
    assigned: frozenset[str] = field(default_factory=frozenset)
    # Test data for the registry-walking tests: calls to check against finite
    # differences (input name -> shape for differentiable inputs, -> value
    # for the others) and the interval inputs are drawn from.
    examples: tuple[dict, ...] = ()
    domain: tuple[float, float] = (0.2, 0.8)
    # How forward mode finds the tangent when no @tangent rule is given:
    # "linear" (the same call on the tangents), "bilinear" (f(t_a, b) + f(a, t_b)),
    # or derived from an elementwise adjoint (see forward.py).
    form: str = ""
    _differentiable: Optional[tuple[str, ...]] = field(default=None, init=False, repr=False, compare=False)

    def differentiable_inputs(self) -> tuple[str, ...]:
        """Inputs whose derivative the rule gives (worked out once: every call of ``fn`` asks)."""
        if self._differentiable is None:
            if self.kind == "adjoint":
                self._differentiable = tuple(i for i in self.inputs if "d_" + i in self.assigned)
            else:
                self._differentiable = tuple(i for i in self.inputs if "t_" + i in self.seeds)
        return self._differentiable


class _LazyRule(Rule):
    """A rule of a template module s2s_ad loads itself (``load_templates``, ``load_deferred``), its
    body parsed at its first use rather than when the module loads: a transform reads the few rules
    of the functions it meets, and parsing all of them (several hundred) was most of the first
    transform's time.  ``body`` and ``assigned`` are left out of the instance until then, so that
    reading either lands in ``__getattr__``, which parses and checks the body (``_read_body``)."""

    def __getattr__(self, name: str) -> Any:
        if name in ("body", "assigned") and "_template" in self.__dict__:
            body, assigned = _read_body(self.__dict__["_template"], self.kind, self.result, self.inputs, self.line - 1)
            self.__dict__.update(body=body, assigned=assigned)
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def _parse_template(template: Callable, kind: str, fn: Any, lazy: bool = False
                    ) -> tuple[Rule, Optional[gast.FunctionDef]]:
    """The rule ``template`` declares for ``fn``; ``lazy``: its body parsed at its first use (``_LazyRule``)."""
    code = getattr(template, "__code__", None)
    if code is None:
        raise TransformError(f"the {kind} rule {getattr(template, '__name__', template)!r}",
                             "a rule is a function defined with def in a .py file")
    _RULE_TEMPLATES.add(template)
    filename, line = code.co_filename, code.co_firstlineno  # (what inspect.getsourcelines reads too)

    def refuse(hint: str, at: int = line) -> TransformError:
        return TransformError(f"the {kind} rule {template.__name__!r}", hint, filename=filename, line=at)

    if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        raise refuse("*args and **kwargs are not allowed in a rule")
    names = code.co_varnames
    positional = list(names[code.co_posonlyargcount:code.co_argcount])
    keyword_only = list(names[code.co_argcount:code.co_argcount + code.co_kwonlyargcount])
    all_params = positional + keyword_only
    defaults: dict[str, Any] = {}
    positional_defaults = template.__defaults__ or ()
    for param, value in zip(positional[len(positional) - len(positional_defaults):], positional_defaults):
        defaults[param] = value
    defaults.update(template.__kwdefaults__ or {})
    if len(all_params) < 2:
        raise refuse("a rule takes the result, the inputs and the incoming derivative")
    result = all_params[0]
    if kind == "adjoint":
        seeds = (all_params[-1],)
        inputs = all_params[1:-1]
        if not seeds[0].startswith("d_"):
            raise refuse(f"its last parameter is the incoming adjoint and must be named d_{result}, "
                         f"not {seeds[0]!r}")
    else:
        strays = [p for p in all_params[1:] if p.startswith("t_") and p[2:] not in all_params]
        if strays:
            raise refuse(f"{strays[0]} is the tangent of no input (tangents are named t_<input>)")
        seeds = tuple(p for p in all_params[1:] if p.startswith("t_") and p[2:] in all_params)
        inputs = [p for p in all_params[1:] if p not in seeds]
    expected = _parameters(fn)
    if expected is not None:
        parameter_names = [p.name for p in expected]
        required = [p.name for p in expected if p.default is p.empty]
        in_order = [n for n in parameter_names if n in inputs] == list(inputs)
        if not in_order or not set(required) <= set(inputs):
            raise refuse(f"its inputs must be named and ordered as the parameters of "
                         f"{getattr(fn, '__qualname__', fn)}: ({', '.join(parameter_names)}), not ({', '.join(inputs)})")
    n_positional = len([p for p in positional if p in inputs])
    header = dict(fn=fn, kind=kind, name=template.__name__, result=result, inputs=tuple(inputs),
                  positional=n_positional, defaults=defaults, seeds=seeds, namespace=template.__globals__,
                  filename=filename, line=line + 1)
    if lazy:
        rule: Rule = _LazyRule(body=[], **header)
        del rule.body, rule.assigned  # (read at the first use: _LazyRule.__getattr__)
        rule.__dict__["_template"] = template
        return rule, None
    body, assigned = _read_body(template, kind, result, tuple(inputs), line)
    return Rule(body=body, assigned=assigned, **header), None


def _read_body(template: Callable, kind: str, result: str, inputs: tuple[str, ...],
               line: int) -> tuple[list, frozenset[str]]:
    """The statements of a rule's body (gast) and the names they assign, checked: assignments only,
    each ``d_<input>`` of an input, a tangent rule's ``t_<result>`` among them.  ``line``: the
    template's first line (its first decorator's)."""
    filename = template.__code__.co_filename
    try:
        lines, _ = inspect.getsourcelines(template)  # (inspect.getsource would tokenize it again)
        source = textwrap.dedent("".join(lines))
    except (OSError, TypeError) as exc:
        raise TransformError(
            f"the {kind} rule {template.__name__!r}",
            "its source cannot be read; define rules in a .py file",
        ) from exc
    fdef = gast.parse(source).body[0]
    assert isinstance(fdef, gast.FunctionDef)
    body = [s for s in fdef.body if not (isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant))]

    def refuse(hint: str, node: Any = None) -> TransformError:
        at = line + (node.lineno - 1 if node is not None else 0)
        return TransformError(f"the {kind} rule {template.__name__!r}", hint, filename=filename, line=at)

    for stmt in body:
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
            raise refuse("a rule body holds only assignments name = expression (use np.where for a choice)", stmt)
    assigned = frozenset(stmt.targets[0].id for stmt in body)
    if kind == "adjoint":
        bad = sorted(n for n in assigned if n.startswith("d_") and n[2:] not in inputs)
        if bad:
            raise refuse(f"it assigns {', '.join(bad)} but has no input named {bad[0][2:]!r}")
    elif "t_" + result not in assigned:
        raise refuse(f"its body must assign t_{result}")
    return body, assigned


def _parameters(fn: Any) -> Optional[list[inspect.Parameter]]:
    """The parameters a rule's inputs must follow: those of a plain Python function.

    A rule may leave out optional parameters.  NumPy's own functions, builtins
    and ufuncs are not checked: rules name their inputs as NumPy's
    documentation does, and NumPy renames parameters between releases.
    """
    if not inspect.isfunction(fn) or (getattr(fn, "__module__", None) or "").startswith("numpy"):
        return None
    parameters = list(inspect.signature(fn).parameters.values())
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters):
        return None
    return parameters


class ArgumentMismatch(Exception):
    """A call's arguments do not fit its rule's parameters (lower.py locates it)."""


def bind_arguments(rule: Rule, args: tuple, kwargs: tuple) -> dict[str, Any]:
    """Match a call's arguments to the rule's inputs, filling in defaults.

    ``args`` and ``kwargs`` hold IR expressions; defaults are returned as
    plain values for the caller to wrap.  Raises ``ArgumentMismatch``.
    """
    if len(args) > rule.positional:
        raise ArgumentMismatch(
            f"{len(args)} positional arguments, but the rule {rule.name!r} takes at most {rule.positional}")
    bound: dict[str, Any] = dict(zip(rule.inputs, args))
    for name, value in kwargs:
        if name not in rule.inputs:
            raise ArgumentMismatch(f"the keyword {name!r}, which the rule {rule.name!r} does not handle")
        if name in bound:
            raise ArgumentMismatch(f"{name!r} given twice")
        bound[name] = value
    for name in rule.inputs:
        if name not in bound:
            if name not in rule.defaults:
                raise ArgumentMismatch(f"no value for {name!r}")
            bound[name] = _Default(rule.defaults[name])
    return bound


@dataclass(frozen=True)
class _Default:
    """A default value of a rule parameter, not given by the call."""

    value: Any


def is_default(value: Any) -> bool:
    return isinstance(value, _Default)
