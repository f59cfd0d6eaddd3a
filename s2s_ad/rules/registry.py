"""The rule registry: which functions have derivative rules, and the rules.

A rule is a template: a small Python function whose parameters name the
primal result, the primal inputs (as the differentiated function names its
parameters) and the incoming adjoint (or the input tangents), and whose body
is the derivative written as ordinary code.  It is parsed once and spliced
into generated code; it is never called.

Reverse rule::

    @adjoint(np.tanh, elementwise=True)
    def tanh(out, x, d_out):
        d_x = d_out * (1.0 - out * out)

Forward rule::

    @tangent(np.tanh, elementwise=True)
    def tanh(out, x, t_x):
        t_out = t_x * (1.0 - out * out)

Parameters with defaults are optional inputs (``axis=None``); keyword-only
parameters after ``*`` are inputs that can only be passed by keyword.  An
input whose ``d_<name>`` the body never assigns gets no gradient.
``elementwise=True`` declares that the result has the broadcast shape of the
inputs; the generator then reduces each contribution to its input's shape
where broadcasting can have happened.  A rule that is not elementwise returns
contributions already shaped like its inputs.

Input: the decorated templates.  Output: ``Rule`` records, looked up by the
function object's identity (so ``from numpy import tanh`` and ``np.tanh`` are
the same rule).  The built-in rules live in ``s2s_ad.templates`` and are
loaded on the first lookup.  A template is parsed into its ``Rule`` by
rule.py; the facts a template may declare are fact_meanings.py's ``FACTS``.
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
import pkgutil
import threading
import types
from typing import Any, Callable, Optional

from ..core.errors import TransformError
from ..core.identity import IdentitySet
from .fact_meanings import FACTS
# (the engine and the tests read Rule, bind_arguments, is_default and ArgumentMismatch from here too)
from .rule import _RULE_TEMPLATES, ArgumentMismatch, Rule, _parse_template, bind_arguments, is_default

_NO_DEFAULT = object()


_ADJOINTS: dict[Any, Rule] = {}
_TANGENTS: dict[Any, Rule] = {}
_NONDIFFERENTIABLE: set = set()
_FRESH_VALUES: set = set()  # new arrays or numbers (see fresh_values)
_ELEMENTWISE_CONSTANTS: set = set()  # non-differentiable, but shaped like their broadcast inputs
_METHODS: dict[str, tuple[Any, bool]] = {}
_ATTRIBUTES: dict[str, Any] = {}
_FRESH_ARRAYS: set = set()  # functions that return a new array the caller owns
_RESULT_ITEMS: dict = {}  # functions that return a tuple: how many items (np.linalg.eigh: 2)
_FACTS: dict[Any, dict[str, Any]] = {}  # function -> its declared facts (see FACTS)
_NO_FACTS: types.MappingProxyType = types.MappingProxyType({})  # those of a function with none
_VARIANTS: dict[Any, list[tuple[dict[str, int], Rule]]] = {}  # function -> (input ranks, adjoint rule for them)
_DEFERRED: dict[str, Callable[[Any], None]] = {}  # module name -> what registers its rules (see when_imported)
_deferred_lock = threading.Lock()
_loaded = False
_load_lock = threading.Lock()
_generation = 0  # rules registered so far: cached code checks its callees' rules again when it changes
_TEMPLATE_MODULES: list[types.ModuleType] = []  # every template module loaded (s2s_ad's and outside ones)
_helpers: tuple[int, Any, frozenset[str]] = (0, {}, frozenset())  # (modules read, helpers by name, their names)


def generation() -> int:
    """A count that changes whenever a rule is registered (see ``snapshot.Snapshot``)."""
    return _generation


def _key(fn: Any) -> Any:
    # Bound builtin methods compare equal but are not identical; identity of
    # the underlying object is what "recognised by identity" means for us.
    return fn


# Whether the rules declared now are s2s_ad's own, loaded with their module (their bodies parsed lazily:
# ``_LazyRule``); a user's rule is parsed and checked where it is declared, so a mistake in it is
# said there.
_lazy_bodies = 0


def _register(table: dict, kind: str, fn: Any, elementwise: bool, method: Optional[str],
              pack_method_args: bool, attribute: Optional[str],
              examples: tuple = (), domain: tuple = (0.2, 0.8), form: str = "",
              previous_facts: Optional[dict] = None) -> Callable:
    def decorate(template: Callable) -> Callable:
        if template.__globals__.get(template.__name__) is fn:
            raise TransformError(f"the {kind} rule {template.__name__!r}", f"it is named like the function it is "
                                 f"a rule for, and so hides it from the rest of its module; name it "
                                 f"{template.__name__}_rule", filename=inspect.getsourcefile(template))
        rule, _ = _parse_template(template, kind, fn, lazy=_lazy_bodies > 0)
        rule.elementwise = elementwise
        rule.form = form
        rule.examples = tuple(examples)
        rule.domain = tuple(domain)
        global _generation
        previous = table.get(_key(fn))
        table[_key(fn)] = rule
        _generation += 1
        _check_new_rule(rule, previous, previous_facts)
        if method:
            _METHODS[method] = (fn, pack_method_args)
        if attribute:
            _ATTRIBUTES[attribute] = fn
        return template
    return decorate


def adjoint(fn: Any, *, elementwise: bool = False, method: Optional[str] = None,
            pack_method_args: bool = False, attribute: Optional[str] = None,
            examples: tuple = (), domain: tuple = (0.2, 0.8), linear: bool = False,
            bilinear: bool = False, items: "int | Callable[..., int]" = 0,
            ranks: Optional[dict[str, int]] = None,
            **facts: Any) -> Callable:
    """Declare the reverse rule of ``fn`` (see the module docstring).

    ``method="sum"`` also makes ``x.sum(...)`` mean ``fn(x, ...)``;
    ``pack_method_args`` packs ``x.reshape(2, 3)`` into ``fn(x, (2, 3))``;
    ``attribute="T"`` makes ``x.T`` mean ``fn(x)``.  ``examples`` and
    ``domain`` are test data: see ``Rule``.  ``linear`` (``fn`` is linear in
    its differentiable inputs) and ``bilinear`` tell forward mode its tangent.
    ``items=2`` declares that ``fn`` returns a tuple of two items (``w, v =
    np.linalg.eigh(a)``): its adjoint ``d_out`` is then a tuple of the items'
    adjoints (zeros for an item not used), read as ``d_out[0]``.  Where the count
    depends on the call, ``items`` is a function of some of the rule's inputs,
    its parameters named as the rule names them (``np.split``: ``items=lambda
    indices_or_sections: ...``); a call gets its count where those arguments are
    constants, and is otherwise handled as one returning a sequence of unknown
    length; a function marked ``counts_given = True`` is called anyway, with
    ``NOT_CONSTANT`` for an argument that is not a constant (``np.meshgrid``: one
    item per array given, whatever the arrays).  Any further keyword is a fact about ``fn`` (``view=True``: see ``FACTS``).

    ``ranks={"x1": 2, "x2": 2}`` declares a variant: the rule used instead of
    ``fn``'s general one where the inputs' ranks are known to be these (``d_out @
    x2.T`` for two matrices, where the general rule calls a runtime helper that
    looks at the ranks).  It takes the same inputs as the general rule.
    """
    if ranks is not None:
        return _register_variant(fn, dict(ranks), elementwise, examples, domain)
    previous_facts = _facts_before(fn)
    declare(fn, **facts)
    if items:
        _RESULT_ITEMS[_key(fn)] = items
    form = "linear" if linear else "bilinear" if bilinear else ""
    return _register(_ADJOINTS, "adjoint", fn, elementwise, method, pack_method_args, attribute,
                     examples, domain, form, previous_facts)


def _facts_before(fn: Any) -> Optional[dict]:
    """A copy of the facts declared about ``fn`` so far (None: none), to put back if its new rule is refused."""
    try:
        known = _FACTS.get(_key(fn))
    except TypeError:
        return None
    return dict(known) if known is not None else None


def _register_variant(fn: Any, ranks: dict[str, int], elementwise: bool, examples: tuple,
                      domain: tuple) -> Callable:
    def decorate(template: Callable) -> Callable:
        general = _ADJOINTS.get(_key(fn))
        rule, _ = _parse_template(template, "adjoint", fn, lazy=_lazy_bodies > 0)
        if general is None or rule.inputs != general.inputs or not set(ranks) <= set(rule.inputs):
            raise TransformError(f"the adjoint rule {template.__name__!r}", "a variant for known ranks follows the "
                                 "general rule of its function and takes the same inputs",
                                 filename=rule.filename, line=rule.line)
        rule.elementwise, rule.form = elementwise, general.form
        rule.examples, rule.domain = tuple(examples), tuple(domain)
        global _generation
        _VARIANTS.setdefault(_key(fn), []).append((ranks, rule))
        _generation += 1
        return template
    return decorate


def for_ranks(rule: Rule, rank_of: Callable[[str], Optional[int]]) -> Rule:
    """The variant of the adjoint ``rule`` declared for the inputs' ranks (``rank_of(input)``, None
    where unknown), or ``rule`` itself where none matches."""
    try:
        variants = _VARIANTS.get(_key(rule.fn), ())
    except TypeError:
        return rule
    for ranks, variant in variants:
        if all(rank_of(name) == rank for name, rank in ranks.items()):
            return variant
    return rule


def tangent(fn: Any, *, elementwise: bool = False, examples: tuple = (), domain: tuple = (0.2, 0.8),
            **facts: Any) -> Callable:
    """Declare the forward (tangent) rule of ``fn``.

    A function with a tangent rule and no adjoint rule works in forward mode
    (``jvp``, and the outer levels of higher derivatives) and is refused by
    reverse mode.  ``examples`` and ``domain`` are test data, as for adjoints;
    further keywords are facts about ``fn`` (see ``FACTS``).
    """
    previous_facts = _facts_before(fn)
    declare(fn, **facts)
    return _register(_TANGENTS, "tangent", fn, elementwise, None, False, None, examples, domain,
                     previous_facts=previous_facts)


def nondifferentiable(*fns: Any, elementwise: bool = False, methods: Optional[dict[str, Any]] = None,
                      attributes: Optional[dict[str, Any]] = None, **facts: Any) -> None:
    """Declare functions whose results carry no derivative (comparisons, shapes).

    ``elementwise=True`` says the result has the broadcast shape of the inputs
    (comparisons, ``np.sign``), which lets the generator prove shapes equal.
    Further keywords are facts about each of ``fns`` (see ``FACTS``).
    """
    declare(*fns, **facts)
    global _generation
    _generation += 1
    for fn in fns:
        _NONDIFFERENTIABLE.add(_key(fn))
        if elementwise:
            _ELEMENTWISE_CONSTANTS.add(_key(fn))
    for name, fn in (methods or {}).items():
        _METHODS[name] = (fn, False)
    for name, fn in (attributes or {}).items():
        _ATTRIBUTES[name] = fn


def declare(*fns: Any, **facts: Any) -> None:
    """Declare facts (``FACTS``) about ``fns``: ``declare(np.reshape, view=True)``."""
    unknown = sorted(set(facts) - set(FACTS))
    if unknown:
        raise TypeError(f"unknown fact {unknown[0]!r}; the facts are {', '.join(sorted(FACTS))}")
    if not facts:
        return
    for fn in fns:
        known = {**_FACTS.get(_key(fn), {}), **facts}
        if known.get("joins_sequences") and "sequence_helpers" not in known:
            raise TypeError(f"{getattr(fn, '__name__', fn)} joins sequences: declare its sequence_helpers with it")
    global _generation
    _generation += 1
    for fn in fns:
        _FACTS.setdefault(_key(fn), {}).update(facts)


# a factory of each helper's compiled version (``compiled``), by target, for that target's runtime
_COMPILED: dict[str, dict[Any, Callable[[Any], Callable[..., Any]]]] = {}  # target -> helper -> factory


def compiled(helper: Callable[..., Any], target: str = "numba") -> Callable[[Callable[[Any], Callable[..., Any]]], Any]:
    """Declare how the compiler target ``target`` runs a template's ``helper``:

        @compiled(add_adjoint)     # target="numba", the one target that compiles
        def _(types):              # Numba's ``numba.types``, given when Numba is used
            def typing(grad, a, b):   # numba.extending.overload's typing function: the
                if ...:               # implementation for these types, or None (not compiled)
                    return lambda grad, a, b: ...
            return typing

    The versions are kept by target, each target reading its own (``compiled_versions``); s2s_ad's own
    live beside their target, not in the templates (Numba's: ``s2s_ad/targets/numba/rules/``).  The
    implementation must do what ``helper`` does for the types it accepts (the backend's tests compare
    the two); where it returns None, code calling ``helper`` runs as Python.  No compiler is imported by
    the declaration."""
    def register(factory: Callable[[Any], Callable[..., Any]]) -> Any:
        _COMPILED.setdefault(target, {})[helper] = factory
        return factory
    return register


def compiled_versions(target: str) -> dict[Any, Callable[[Any], Callable[..., Any]]]:
    """Every helper given a compiled version for ``target`` (``compiled``), with its factory: those the
    templates loaded declare (users' too), and those of the modules the target imported itself."""
    load_templates()
    return dict(_COMPILED.get(target, {}))


def fact(fn: Any, name: str, default: Any = None) -> Any:
    """The fact ``name`` declared about ``fn`` (see ``FACTS``), or ``default``."""
    if not _loaded:  # (checked here: the transformer asks for facts on every call it meets)
        load_templates()
    try:
        return _FACTS.get(_key(fn), _NO_FACTS).get(name, default)
    except TypeError:  # an unhashable callable
        return default


def facts_of(fn: Any) -> "types.MappingProxyType | dict[str, Any]":
    """Every fact declared about ``fn``, by name (read only): one lookup where a hot path asks several."""
    if not _loaded:
        load_templates()
    try:
        return _FACTS.get(_key(fn), _NO_FACTS)
    except TypeError:  # an unhashable callable
        return _NO_FACTS


def declared(name: str) -> list[Any]:
    """The functions the fact ``name`` is declared about."""
    load_templates()
    return [fn for fn, facts in _FACTS.items() if name in facts]


def _templates_package() -> Any:
    """``s2s_ad.templates``; in a source checkout that is not installed, ../templates."""
    try:
        return importlib.import_module("s2s_ad.templates")
    except ModuleNotFoundError:
        folder = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "templates")
        spec = importlib.util.spec_from_file_location(
            "s2s_ad.templates", os.path.join(folder, "__init__.py"), submodule_search_locations=[folder])
        if spec is None or spec.loader is None:
            raise
        package = importlib.util.module_from_spec(spec)
        sys.modules["s2s_ad.templates"] = package
        spec.loader.exec_module(package)
        return package


_SPELLINGS: list[tuple[str, Any, str, Any]] = []  # (prefix, module, first part of the prefix, its module)


def spell_module(prefix: str, module: types.ModuleType) -> None:
    """Generated code names a public function of ``module`` ``<prefix>.<name>``
    (``spell_module("np", numpy)``: ``np.sin``) instead of holding it under a name of its own.

    Modules are tried in the order declared: the first that holds a function spells it (``np.matmul``
    before ``np.linalg.matmul``).  A dotted prefix's first part must be declared before it
    (``np`` before ``np.linalg``): generated code finds that module among its globals.
    """
    root = prefix.partition(".")[0]
    roots = {p: m for p, m, _, _ in _SPELLINGS}
    if root != prefix and root not in roots:
        raise ValueError(f"spell_module({prefix!r}): declare how {root!r} is spelled first")
    _SPELLINGS.append((prefix, module, root, roots.get(root, module)))


def module_spellings() -> tuple[tuple[str, Any, str, Any], ...]:
    """``(prefix, module, root, root module)`` for each ``spell_module``, in the order declared."""
    load_templates()
    return tuple(_SPELLINGS)


def method_alias(name: str, fn: Any) -> None:
    """Make ``x.<name>(...)`` mean ``fn(x, ...)`` where the rule already names another method."""
    _METHODS[name] = (fn, False)


def fresh_arrays(*fns: Any) -> None:
    """Declare functions that return a new array (``np.zeros``, ``np.copy``...).

    Only such arrays may be written into (``out[i] = v``) by a differentiated
    function: writing into an argument would change the caller's data.
    """
    for fn in fns:
        _FRESH_ARRAYS.add(_key(fn))


def makes_fresh_array(fn: Any) -> bool:
    load_templates()
    try:
        return _key(fn) in _FRESH_ARRAYS
    except TypeError:
        return False


# An argument of a call that is not a constant (see result_items).
NOT_CONSTANT = object()


def result_items(fn: Any, args: tuple = (), kwargs: tuple = ()) -> int:
    """How many items the tuple ``fn`` returns (declared with ``items=``), or 0 where unknown.

    ``args`` and ``kwargs`` (pairs) are the call's arguments as values, ``NOT_CONSTANT``
    where one is not a constant: a count declared as a function of the inputs is computed
    from them, where the inputs it names are constants.
    """
    load_templates()
    try:
        items = _RESULT_ITEMS.get(_key(fn), 0)
    except TypeError:
        return 0
    if not callable(items):
        return items
    try:
        bound = bind_arguments(_ADJOINTS[_key(fn)], tuple(args), tuple(kwargs))
    except ArgumentMismatch:
        return 0
    values = {}
    for name in inspect.signature(items).parameters:
        value = bound.get(name, NOT_CONSTANT)
        value = value.value if is_default(value) else value
        if value is NOT_CONSTANT and not getattr(items, "counts_given", False):
            return 0
        values[name] = value
    try:
        count = items(**values)
    except (TypeError, ValueError):  # arguments NumPy itself would refuse: NumPy says so when it runs
        return 0
    return count if isinstance(count, int) and count > 0 else 0


def argument_refusal(fn: Any, args: tuple = (), kwargs: tuple = ()) -> Optional[str]:
    """Why a call of ``fn`` with these arguments cannot be differentiated (declared ``refused_arguments``),
    or None; ``args`` and ``kwargs`` (pairs) are values, ``NOT_CONSTANT`` where one is not a constant,
    and a refusal needs every input it names to be a constant (or left to its default)."""
    check = fact(fn, "refused_arguments")
    rule = adjoint_rule(fn) or tangent_rule(fn)
    if check is None or rule is None:
        return None
    try:
        bound = bind_arguments(rule, tuple(args), tuple(kwargs))
    except ArgumentMismatch:
        return None
    values = {}
    for name in inspect.signature(check).parameters:
        value = bound.get(name, NOT_CONSTANT)
        value = value.value if is_default(value) else value
        if value is NOT_CONSTANT:
            return None
        values[name] = value
    return check(**values)


def fresh_values(*fns: Any) -> None:
    """Declare functions that return a new array or a number, never an argument or a view of one
    (``np.dot``): an array they return may be written into by index."""
    for fn in fns:
        _FRESH_VALUES.add(_key(fn))


def declared_fresh_value(fn: Any) -> bool:
    """Whether ``fn`` is declared with ``fresh_values`` (a new array or a number, never an argument or
    a view of one), whatever else is known of it (aliasing.new_object)."""
    load_templates()
    try:
        return _key(fn) in _FRESH_VALUES
    except TypeError:
        return False


def load_templates() -> None:
    """Import every module of ``s2s_ad.templates`` once (thread-safe)."""
    global _loaded
    if _loaded:
        return
    with _load_lock:
        if _loaded:
            return
        package = _templates_package()
        with _checks_deferred(), _bodies_parsed_lazily():
            for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
                _TEMPLATE_MODULES.append(importlib.import_module(f"s2s_ad.templates.{info.name}"))
        _loaded = True
        if checking_rules():  # (after _loaded: the check asks the registry)
            refuse_contradicted_rules()


class _checks_deferred:
    """While template modules load, rules are not checked one by one: a module may declare a rule's
    facts after the rule (``declare(...)`` below it); they are checked once the module is in."""

    def __enter__(self) -> None:
        global _deferring_checks
        _deferring_checks += 1

    def __exit__(self, *exc: Any) -> None:
        global _deferring_checks
        _deferring_checks -= 1


class _bodies_parsed_lazily:
    """While s2s_ad loads its own template modules, their rules' bodies are parsed at first use (``_LazyRule``)."""

    def __enter__(self) -> None:
        global _lazy_bodies
        _lazy_bodies += 1

    def __exit__(self, *exc: Any) -> None:
        global _lazy_bodies
        _lazy_bodies -= 1


def when_imported(module_name: str, register: Callable[[Any], None]) -> None:
    """Run ``register(module)`` once the module ``module_name`` is imported: now if it is, else at
    the first lookup that misses after the user imports it.  The rules of an optional library
    (SciPy) then cost nothing, not even its import, to whoever does not use it."""
    module = sys.modules.get(module_name)
    if module is not None:
        register(module)
    else:
        _DEFERRED[module_name] = register


def load_deferred() -> bool:
    """Register the rules of the libraries imported since they were deferred; True if any were."""
    if not _DEFERRED:
        return False
    with _deferred_lock:
        ready = [name for name in _DEFERRED if name in sys.modules]
        before = IdentitySet(_registered_rules() if ready and checking_rules() else ())
        with _checks_deferred(), _bodies_parsed_lazily():
            for name in ready:
                _DEFERRED.pop(name)(sys.modules[name])
        if ready and checking_rules():
            refuse_contradicted_rules([rule for rule in _registered_rules() if rule not in before])
    return bool(ready)


def load_template_module(path: str) -> types.ModuleType:
    """Import the template module at ``path``, a .py file outside s2s_ad, once.

    Its ``@adjoint``, ``@tangent``, ``nondifferentiable`` and ``declare`` join
    the registry exactly as those of ``s2s_ad/templates`` do (a rule it gives
    for a function that already has one replaces it): a library teaches s2s_ad
    its operations without a change to the engine.  Code generated before
    checks its callees' rules again (see ``generation``).
    """
    load_templates()  # the built-in rules first, so that the module's replace them
    path = os.path.abspath(path)
    name = "s2s_ad_templates_" + "".join(c if c.isalnum() else "_" for c in path)
    with _load_lock:
        module = sys.modules.get(name)
        if module is not None:
            return module
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"{path} is not a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            with _checks_deferred():
                spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        _TEMPLATE_MODULES.append(module)
    if checking_rules():
        _refuse_module_rules(module)
    return module


def _refuse_module_rules(module: types.ModuleType) -> None:
    """Debug mode: the rules a template module declared, checked once it is loaded; contradicted,
    they are taken out and loading it raises ``TransformError``."""
    mine = [rule for rule in _registered_rules() if rule.namespace is vars(module)]
    refused = refuse_contradicted_rules(mine)
    if refused:
        first = next(rule for rule in mine if _key(rule.fn) in refused)
        raise TransformError(f"the {first.kind} rule {first.name!r}", "; ".join(refused.values()),
                             filename=first.filename, line=first.line)


def adjoint_rule(fn: Any) -> Optional[Rule]:
    load_templates()
    try:
        rule = _ADJOINTS.get(_key(fn))
        return rule if rule is not None or not load_deferred() else _ADJOINTS.get(_key(fn))
    except TypeError:  # unhashable callable
        return None


def tangent_rule(fn: Any) -> Optional[Rule]:
    load_templates()
    try:
        rule = _TANGENTS.get(_key(fn))
        return rule if rule is not None or not load_deferred() else _TANGENTS.get(_key(fn))
    except TypeError:
        return None


def helpers() -> dict[str, Callable[..., Any]]:
    """The helpers template modules define, by name: their public functions that are not rules
    (``cumsum_grad``, ``sum_items_adjoint``).  Rules' bodies call them, so generated code reads them
    as globals by these names (and no local of generated code takes one: ``naming.Names``)."""
    return dict(_found_helpers()[1])


def helper_names() -> frozenset[str]:
    """The names of ``helpers()``."""
    return _found_helpers()[2]


def _found_helpers() -> tuple[int, Any, frozenset[str]]:
    """``_helpers``, read again from the template modules when one was loaded since."""
    global _helpers
    load_templates()
    modules = list(_TEMPLATE_MODULES)
    if _helpers[0] != len(modules):
        found = {name: value for module in modules for name, value in vars(module).items()
                 if not name.startswith("_") and inspect.isfunction(value)
                 and value.__module__ == module.__name__ and value not in _RULE_TEMPLATES}
        _helpers = (len(modules), types.MappingProxyType(found), frozenset(found))
    return _helpers


def is_template_file(filename: str) -> bool:
    """Whether ``filename`` holds derivative rules (a template module: its helper functions are
    differentiated as they are called from the code its rules generate)."""
    load_templates()
    return any(rule.filename == filename for table in (_ADJOINTS, _TANGENTS) for rule in table.values())


def is_package_template_file(filename: str) -> bool:
    """Whether ``filename`` is a module of ``s2s_ad.templates`` (not a user's file that declares a
    rule next to the code it differentiates)."""
    folders = [os.path.abspath(p) for p in getattr(_templates_package(), "__path__", ())]
    return os.path.dirname(os.path.abspath(filename)) in folders


def is_nondifferentiable(fn: Any) -> bool:
    load_templates()
    try:
        return _key(fn) in _NONDIFFERENTIABLE or (load_deferred() and _key(fn) in _NONDIFFERENTIABLE)
    except TypeError:
        return False


def is_elementwise(fn: Any) -> bool:
    """True if ``fn``'s result has the broadcast shape of its inputs."""
    rule = adjoint_rule(fn)
    if rule is not None:
        return rule.elementwise
    try:
        return _key(fn) in _ELEMENTWISE_CONSTANTS
    except TypeError:
        return False


def is_known(fn: Any) -> bool:
    """True if ``fn`` is a primitive: it has a rule or is declared constant."""
    return adjoint_rule(fn) is not None or tangent_rule(fn) is not None or is_nondifferentiable(fn)


def method_function(name: str) -> Optional[tuple[Any, bool]]:
    load_templates()
    return _METHODS.get(name)


def attribute_function(name: str) -> Optional[Any]:
    load_templates()
    return _ATTRIBUTES.get(name)


def all_rules() -> list[Rule]:
    """Every registered rule: reverse rules, their variants for known ranks, and tangent rules (those
    of the optional libraries imported so far included)."""
    load_templates()
    load_deferred()
    return _registered_rules()


def _registered_rules() -> list[Rule]:
    """Every rule registered now (loads nothing)."""
    variants = [rule for declared in _VARIANTS.values() for _, rule in declared]
    return list(_ADJOINTS.values()) + variants + list(_TANGENTS.values())


def declared_examples(rule: Rule) -> tuple[dict, ...]:
    """The examples declared for ``rule``'s function: the rule's own, else those of its function's
    other rule (a tangent rule beside an adjoint rule takes the same calls)."""
    if rule.examples:
        return rule.examples
    try:
        other = (_TANGENTS if rule.kind == "adjoint" else _ADJOINTS).get(_key(rule.fn))
    except TypeError:
        return ()
    return other.examples if other is not None else ()


def fact_contradictions(rule: Rule) -> list[str]:
    """What NumPy contradicts among the facts declared about ``rule``'s function, on the rule's
    examples (see ``rule_facts``); an empty list where they all hold."""
    from . import rule_facts  # (only the debug mode and the tests check: importing s2s_ad stays cheap)
    key = _key(rule.fn)
    facts = _FACTS.get(key, _NO_FACTS)
    fresh = key in _FRESH_VALUES or key in _FRESH_ARRAYS or (rule.elementwise and not facts.get("returns_operand"))
    return rule_facts.contradictions(rule, declared_examples(rule), facts, fresh, _RESULT_ITEMS.get(key, 0))


# -- the debug mode: rules whose facts NumPy contradicts do not load ----------------------------

CHECK_RULES_VARIABLE = "S2S_AD_CHECK_RULES"
_CONTRADICTED: dict[Any, str] = {}  # function -> why its rules were refused (see refuse_contradicted_rules)
_deferring_checks = 0  # > 0 while template modules load: their rules are checked once all are in


def checking_rules() -> bool:
    """Whether rules are checked against NumPy as they load (``S2S_AD_CHECK_RULES=1``; the test
    suite turns it on).  Off, loading costs nothing: the test suite checks every rule instead."""
    return os.environ.get(CHECK_RULES_VARIABLE, "").strip().lower() not in ("", "0", "false", "no", "off")


def _refusal(rule: Rule, found: list[str]) -> str:
    where = f"{os.path.basename(rule.filename)}:{rule.line}"
    return (f"its {rule.kind} rule {rule.name!r} ({where}) declares facts NumPy contradicts, so it was not "
            f"loaded: {found[0]}" + (f" (and {len(found) - 1} more)" if len(found) > 1 else ""))


def _unregister(rule: Rule) -> None:
    key = _key(rule.fn)
    for table in (_ADJOINTS, _TANGENTS):
        if table.get(key) is rule:
            del table[key]
    if key in _VARIANTS:
        _VARIANTS[key] = [(ranks, r) for ranks, r in _VARIANTS[key] if r is not rule]


def refuse_contradicted_rules(candidates: Optional[list[Rule]] = None) -> dict[Any, str]:
    """Check ``candidates`` (every registered rule where None) against NumPy; each whose facts it
    contradicts is taken out of the registry, and its function declared ``refused`` with the reason
    (a call of it is then a ``TransformError`` naming the call).  Returns function -> reason."""
    global _generation
    refused: dict[Any, str] = {}
    for rule in (all_rules() if candidates is None else candidates):
        if not (rule.examples or rule.elementwise or declared_examples(rule)):
            continue  # nothing to run (the registry test fails such a rule)
        found = fact_contradictions(rule)
        if found:
            _unregister(rule)
            refused[_key(rule.fn)] = _CONTRADICTED[_key(rule.fn)] = _refusal(rule, found)
            _FACTS.setdefault(_key(rule.fn), {})["refused"] = refused[_key(rule.fn)]
            _generation += 1
    return refused


def contradicted_rules() -> dict[Any, str]:
    """The functions whose rules the debug mode refused, with the reason."""
    return dict(_CONTRADICTED)


def _check_new_rule(rule: Rule, previous: Optional[Rule], previous_facts: Optional[dict]) -> None:
    """In the debug mode, a rule registered outside a template module's loading (a user's
    ``@s2s_ad.adjoint`` with examples) is checked now: contradicted, it is not loaded (the previous
    rule and facts of its function are put back) and registering it raises ``TransformError``."""
    if _deferring_checks or not checking_rules() or not (rule.examples or rule.elementwise):
        return
    found = fact_contradictions(rule)
    if not found:
        return
    key = _key(rule.fn)
    _unregister(rule)
    if previous is not None:
        (_ADJOINTS if rule.kind == "adjoint" else _TANGENTS)[key] = previous
    if previous_facts is None:
        _FACTS.pop(key, None)
    else:
        _FACTS[key] = previous_facts
    raise TransformError(f"the {rule.kind} rule {rule.name!r}", "NumPy contradicts the facts it declares, on its "
                         "examples: " + "; ".join(found), filename=rule.filename, line=rule.line)


def all_adjoint_rules() -> list[Rule]:
    """Every registered reverse rule (the registry-walking tests use this)."""
    load_templates()
    return list(_ADJOINTS.values())


def tangent_only_rules() -> list[Rule]:
    """The tangent rules of functions that have no reverse rule."""
    load_templates()
    return [rule for key, rule in _TANGENTS.items() if key not in _ADJOINTS]


def constant_functions() -> list[Any]:
    """The functions declared ``nondifferentiable`` (zero derivative)."""
    load_templates()
    return list(_NONDIFFERENTIABLE)
