"""Stage 1a: everyday statements rewritten into the subset the rest reads (gast → gast).

Input: a freshly parsed ``gast.FunctionDef``.  Output: the same function, in
place, with

* annotated assignments as plain ones (``x: float = v`` is ``x = v``; a bare
  ``x: float`` declares nothing and goes);
* a lambda bound to a name (``sq = lambda t: t * t``) as the nested
  ``def sq(t): return t * t``, which ``lower.py`` inlines where it is called,
  reading the enclosing names as they are at the call, as Python does; a
  lambda passed straight to a call (``apply(lambda t: t ** 3, x)``) as such
  a def (``lambda_1``) placed before the statement, and so is a lambda called
  where it is written (``(lambda u: u ** 2)(v[0])``) or returned (``return lambda z: a * z``,
  a function a helper makes); a lambda's defaults that
  are not constants are computed where it is made, into names of their own;
* a function a call returns, called where it is returned (``make_act(0.1)(x)``,
  ``functools.partial(f, c=2.0)(x)``), as that call bound to a name of its
  own before the statement (``make_act_fn = make_act(0.1)``), which is how
  ``lower.py`` reads a factory's function; not where the statement would
  compute it more or fewer times (a ``while`` test, a conditional
  expression, ``and``/``or``, a comprehension or lambda);
* a store into an element of an element (``parts[1][0] = v``, ``grid[i][j] += v``) as the outer
  element bound to a name of its own first (``parts_item = parts[1]``; ``parts_item[0] = v``): the
  same object Python's own evaluation of the target takes, so a write through a view, a row or an
  array a container holds is the memory model's, and one into a copy (``a[[0, 1]][0] = v``) is lost
  as NumPy loses it;
* an attribute updated in place (``state.v += w``) as Python runs it: the attribute read into a name
  of its own, that name updated (``state_v += w``: on an array, NumPy changes the array itself, which
  the memory model follows to every name that sees it), and stored back (``state.v = state_v``);
* an attribute store into an object only one name holds (``state.v = w``) as that name bound to the
  object with the attribute replaced (``attribute_stores.py``);
* a statement calling a NumPy function with ``out=`` (``np.exp(g, out=g)``, ``np.multiply(a, b,
  out=c[1:])``; spelled ``np.`` or ``numpy.``, no ``where=`` or ``casting=``) as the store it makes,
  ``c[...] = np.multiply(a, b)``, the call marked ``writes_out`` (the lowering checks that it is a
  ufunc of one result and that its result casts to ``c`` as NumPy's rule allows): every analysis of
  stores and views sees the write;
* a generator expression that ``sum``, ``min``, ``max``, ``any``, ``all``,
  ``list``, ``tuple`` or ``sorted`` consume (``sum(v ** 2 for v in xs)``) as the
  list comprehension it amounts to (the function is pure: nothing can tell
  the list made first from the items made one by one).

Nothing here needs to know what a name means; ``parse.py`` runs it before
checking the subset, and only when the tree holds one of these nodes.
"""
from __future__ import annotations

import ast

import builtins
from typing import Any

import gast

from .attribute_stores import changes_its_object, gives_and_may_change, rewrite_stores, stores_an_attribute

# The node kinds this stage rewrites (with a call of a call's result: parse.py calls it only if the tree holds one).
REWRITTEN = (gast.AnnAssign, gast.Lambda, gast.GeneratorExp)


def rewritten(node: Any) -> bool:
    """Whether ``rewrite`` changes ``node``: one of ``REWRITTEN``, a call of what a call returns, a
    store into an element of an element, into an attribute or an ``out=``, or a method called for its
    effect (which ``attribute_stores`` may read as changing its object)."""
    return isinstance(node, REWRITTEN) or _calls_a_result(node) or _stores_into_an_element_of_an_element(node) \
        or stores_an_attribute(node) or _updates_an_attribute(node) or _writes_into_out(node) \
        or changes_its_object(node) or gives_and_may_change(node)


def _writes_into_out(stmt: Any) -> bool:
    """``np.exp(g, out=g)`` as a statement: a call of a function spelled from ``np`` or ``numpy`` with
    one ``out=`` keyword (a name, or subscripts of one), no ``where=``, ``casting=`` or ``**``."""
    if not (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)):
        return False
    call = stmt.value
    root = call.func
    while isinstance(root, gast.Attribute):
        root = root.value
    if not (isinstance(call.func, gast.Attribute) and isinstance(root, gast.Name) and root.id in ("np", "numpy")):
        return False
    outs = [k for k in call.keywords if k.arg == "out"]
    if len(outs) != 1 or any(k.arg in (None, "where", "casting") for k in call.keywords) \
            or any(isinstance(a, gast.Starred) for a in call.args):
        return False
    inner = outs[0].value
    while isinstance(inner, gast.Subscript):
        inner = inner.value
    return isinstance(inner, gast.Name)


def _out_as_store(stmt: gast.Expr) -> gast.Assign:
    """``np.f(a, out=c)`` as ``c[...] = np.f(a)``, the call marked ``writes_out``."""
    call = stmt.value
    out = next(k.value for k in call.keywords if k.arg == "out")
    plain = _located(gast.Call(func=call.func, args=call.args, keywords=[k for k in call.keywords if k.arg != "out"]),
                     call)
    plain.writes_out = ast.unparse(gast.gast_to_ast(out))  # (what a refusal or a check names: c)
    store = _located(gast.Subscript(value=out, slice=_located(gast.Constant(value=Ellipsis, kind=None), out),
                                    ctx=gast.Store()), out)
    store.written_as = f"{plain.writes_out} (out= of {ast.unparse(gast.gast_to_ast(call.func))})"
    return _located(gast.Assign(targets=[store], value=plain, type_comment=None), stmt)


def _updates_an_attribute(stmt: Any) -> bool:
    """``name.attr op= value``."""
    return isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Attribute) \
        and isinstance(stmt.target.value, gast.Name)


def _stores_into_an_element_of_an_element(stmt: Any) -> bool:
    """``a[i][j] = v`` or ``a[i][j] += v`` (one target; the outer element read by subscripts of a name)."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
    elif isinstance(stmt, gast.AugAssign):
        target = stmt.target
    else:
        return False
    if not (isinstance(target, gast.Subscript) and isinstance(target.value, gast.Subscript)):
        return False
    inner = target.value
    while isinstance(inner, gast.Subscript):
        inner = inner.value
    return isinstance(inner, gast.Name)


def _calls_a_result(node: Any) -> bool:
    """``make_act(0.1)(x)``: a call of what a call of a named function returns; not of a builtin's
    (``type(self)(w)`` makes an object of the class the lowering knows by that very spelling)."""
    if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Call)):
        return False
    called = node.func.func
    return isinstance(called, gast.Attribute) or (isinstance(called, gast.Name) and not hasattr(builtins, called.id))

# Builtins that consume a generator whole, whatever its items: a list comprehension does the same.
_CONSUMERS = ("sum", "min", "max", "any", "all", "list", "tuple", "sorted")


def _joins_a_generator(call: Any) -> bool:
    """``", ".join(<generator>)``: a string's join of one generator expression."""
    return (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and call.func.attr == "join"
            and isinstance(call.func.value, gast.Constant) and isinstance(call.func.value.value, str)
            and len(call.args) == 1 and not call.keywords and isinstance(call.args[0], gast.GeneratorExp))


def rewrite(node: gast.FunctionDef) -> None:
    """Rewrite ``node``'s statement lists in place (see the module docstring)."""
    taken = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
    _split_attribute_updates(node, taken)  # state.v += w: read, updated by a name, stored back
    rewrite_stores(node)  # state.v = w: state bound to the object with v replaced (attribute_stores.py)
    for call in list(gast.walk(node)):
        if (isinstance(call, gast.Call) and isinstance(call.func, gast.Name) and call.func.id in _CONSUMERS
                and call.args and isinstance(call.args[0], gast.GeneratorExp)):
            generator = call.args[0]
            call.args[0] = _located(gast.ListComp(elt=generator.elt, generators=generator.generators), generator)
        elif _joins_a_generator(call):  # ", ".join(f"{v:.3f}" for v in xs): join consumes it whole
            generator = call.args[0]
            call.args[0] = _located(gast.ListComp(elt=generator.elt, generators=generator.generators), generator)
    # A lambda inside a lambda (f = lambda t: (lambda u: u * t)(2.0)) is in a statement only once the
    # outer one is a def: rewrite again while that leaves fewer lambdas.
    lambdas = _count_lambdas(node)
    while True:
        _rewrite_blocks(node, taken)
        left = _count_lambdas(node)
        if left == 0 or left >= lambdas:
            return
        lambdas = left


def _count_lambdas(node: gast.FunctionDef) -> int:
    return sum(isinstance(n, gast.Lambda) for n in gast.walk(node))


def _rewrite_blocks(node: gast.FunctionDef, taken: set) -> None:
    """One pass of ``rewrite`` over every statement list of ``node``."""
    for parent in list(gast.walk(node)):
        for field_name in ("body", "orelse"):
            block = getattr(parent, field_name, None)
            if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                new_block: list = []
                for stmt in block:
                    if _writes_into_out(stmt):  # np.exp(g, out=g): g[...] = np.exp(g)
                        stmt = _out_as_store(stmt)
                    if _stores_into_an_element_of_an_element(stmt):
                        stmt = _element_bound_first(stmt, new_block, taken)
                    new_block.extend(_hoisted_lambdas(stmt, taken))
                    if _names_a_lambda(stmt):
                        new_block.extend(_defaults(stmt.targets[0].id, stmt.value, stmt, taken))
                    new_block.append(_statement(stmt))
                setattr(parent, field_name, new_block)


def _split_attribute_updates(node: gast.FunctionDef, taken: set) -> None:
    """Every ``obj.attr op= v`` of ``node``'s statement lists as ``obj_attr = obj.attr``, ``obj_attr op= v``,
    ``obj.attr = obj_attr``: what Python does (the attribute's ``__iadd__``, whose result is stored
    back), in statements the rest reads: the update is a name's (lower_updates.py decides whether it
    changes an array other names see), and the store is an attribute store (attribute_stores.py, or
    refused where the object may be another's)."""
    for parent in list(gast.walk(node)):
        for field_name in ("body", "orelse"):
            block = getattr(parent, field_name, None)
            if not (isinstance(block, list) and any(map(_updates_an_attribute, block))):
                continue
            new_block: list = []
            for stmt in block:
                if not _updates_an_attribute(stmt):
                    new_block.append(stmt)
                    continue
                target = stmt.target
                read = _located(gast.Attribute(value=_located(gast.Name(id=target.value.id, ctx=gast.Load(),
                                                                        annotation=None, type_comment=None), target.value),
                                               attr=target.attr, ctx=gast.Load()), target)
                item = _assigned_before(f"{target.value.id}_{target.attr}", read, stmt, new_block, taken)
                updated = _located(gast.Name(id=item.id, ctx=gast.Store(), annotation=None, type_comment=None), item)
                updated.written_as = ast.unparse(gast.gast_to_ast(target))  # what a refusal names: state.v
                new_block.append(_located(gast.AugAssign(target=updated, op=stmt.op, value=stmt.value), stmt))
                new_block.append(_located(gast.Assign(targets=[target], value=item, type_comment=None), stmt))
            setattr(parent, field_name, new_block)


def _element_bound_first(stmt: Any, assigns: list, taken: set) -> Any:
    """``a[i][j] = v``: ``a_item = a[i]`` added to ``assigns`` (deeper ones in turn: ``a[i][j][k]`` binds
    ``a_item = a[i]``, then ``a_item_1 = a_item[j]``), and the statement storing into ``a_item[j]``.
    Python evaluates the target's outer element before storing into it; the pure function's value
    ``v`` reads nothing that evaluation changes."""
    target = stmt.targets[0] if isinstance(stmt, gast.Assign) else stmt.target
    chain = []
    inner = target
    while isinstance(inner, gast.Subscript):
        chain.append(inner)
        inner = inner.value
    holder: Any = inner
    for element in reversed(chain[1:]):  # the outermost element first: a[i], then a[i][j], ...
        read = _located(gast.Subscript(value=holder, slice=element.slice, ctx=gast.Load()), element)
        holder = _assigned_before(f"{inner.id}_item", read, stmt, assigns, taken)
    store = _located(gast.Subscript(value=holder, slice=target.slice, ctx=gast.Store()), target)
    store.written_as = ast.unparse(gast.gast_to_ast(target))  # what a refusal names: the user's a[i][j]
    store.holder_written_as = ast.unparse(gast.gast_to_ast(target.value))  # and the element written into: a[i]
    if isinstance(stmt, gast.Assign):
        return _located(gast.Assign(targets=[store], value=stmt.value, type_comment=None), stmt)
    return _located(gast.AugAssign(target=store, op=stmt.op, value=stmt.value), stmt)


def _hoisted_lambdas(stmt: Any, taken: set) -> list:
    """A lambda passed straight to a call (``apply(lambda t: t ** 3, x)``), or an item of a list,
    tuple or dict display (``fs = [lambda v: v ** 2, np.sin]``), becomes a nested def placed before the
    statement, and the call or display holds its name.  (A lambda inside a comprehension
    or another lambda stays: its names are not the statement's.)"""
    own = [stmt.test] if isinstance(stmt, (gast.If, gast.While)) else [stmt.iter] if isinstance(stmt, gast.For) \
        else [] if isinstance(stmt, (gast.FunctionDef, gast.ClassDef)) else [stmt]
    defs: list = []
    if isinstance(stmt, gast.Return):  # return lambda z: a * z (a function a helper makes): a def returned
        stmt.value = _named(stmt.value, stmt, defs, taken)
    for root in own:
        stack = [(root, not isinstance(stmt, gast.While))]
        while stack:
            parent, once = stack.pop()  # once: computed once each time the statement runs
            if isinstance(parent, (gast.ListComp, gast.Lambda, gast.SetComp, gast.DictComp, gast.GeneratorExp)):
                continue
            if isinstance(parent, gast.Call) and once and _calls_a_result(parent):  # make_act(0.1)(x)
                parent.func = _bound_first(parent.func, stmt, defs, taken)
            if isinstance(parent, gast.Call):
                parent.func = _named(parent.func, stmt, defs, taken)  # (lambda u: u ** 2)(v[0])
                parent.args = [_named(a, stmt, defs, taken) for a in parent.args]
                for keyword in parent.keywords:
                    keyword.value = _named(keyword.value, stmt, defs, taken)
            if isinstance(parent, (gast.List, gast.Tuple)) and once and any(
                    isinstance(item, gast.Lambda) for item in parent.elts):  # fs = [lambda v: v ** 2, np.sin]
                parent.elts = [_named(item, stmt, defs, taken) for item in parent.elts]
            if isinstance(parent, gast.Dict) and once and any(isinstance(v, gast.Lambda) for v in parent.values):
                parent.values = [_named(value, stmt, defs, taken) for value in parent.values]  # {"sq": lambda v: ...}
            once = once and not isinstance(parent, (gast.IfExp, gast.BoolOp))
            stack.extend((child, once) for child in gast.iter_child_nodes(parent))
    return defs


def _bound_first(call: gast.Call, stmt: Any, defs: list, taken: set) -> gast.Name:
    """``make_act(0.1)``, whose result the statement calls: assigned before it to a name of its own
    (``make_act_fn``), which the call then reads."""
    called = call.func.id if isinstance(call.func, gast.Name) else call.func.attr
    return _assigned_before(f"{called}_fn", call, stmt, defs, taken)


def _assigned_before(stem: str, value: Any, stmt: Any, assigns: list, taken: set) -> gast.Name:
    """``value`` assigned, before ``stmt``, to a fresh name (``stem``, else ``stem_1``, ``stem_2``...),
    the assignment added to ``assigns``; the name, to read it by."""
    k, name = 0, stem
    while name in taken:
        k += 1
        name = f"{stem}_{k}"
    taken.add(name)
    target = _located(gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None), value)
    assigns.append(_located(gast.Assign(targets=[target], value=value, type_comment=None), stmt))
    return _located(gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None), value)


def _named(arg: Any, stmt: Any, defs: list, taken: set) -> Any:
    if not isinstance(arg, gast.Lambda):
        return arg
    k = 1
    while f"lambda_{k}" in taken:
        k += 1
    name = f"lambda_{k}"
    taken.add(name)
    defs.extend(_defaults(name, arg, stmt, taken))
    defs.append(_def(name, arg, stmt))
    return _located(gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None), arg)


def _defaults(name: str, lam: gast.Lambda, stmt: Any, taken: set) -> list:
    """A lambda's defaults are computed where it is made (``lambda z, c=c: ...`` keeps this ``c``):
    each one not a constant is assigned to a fresh name there, which the default then reads
    (lower.py reads a nested function's defaults where it is called)."""
    params = lam.args.args[len(lam.args.args) - len(lam.args.defaults):]
    assigns: list = []
    defaults: list = []
    for param, default in zip(params, lam.args.defaults):
        if isinstance(default, gast.Constant):
            defaults.append(default)
            continue
        defaults.append(_assigned_before(f"{name}_{param.id}", default, stmt, assigns, taken))
    lam.args.defaults = defaults
    return assigns


def _def(name: str, lam: gast.Lambda, stmt: Any) -> gast.FunctionDef:
    body = [_located(gast.Return(value=lam.body), lam.body)]
    function = gast.FunctionDef(name=name, args=lam.args, body=body, decorator_list=[], returns=None,
                                type_comment=None)
    if "type_params" in gast.FunctionDef._fields:  # gast 0.6 and later
        function.type_params = []
    function.from_lambda = True  # for messages: "the lambda", not the name given here
    return _located(function, stmt)


def _statement(stmt: Any) -> Any:
    if isinstance(stmt, gast.AnnAssign):
        if stmt.value is None:
            return _located(gast.Pass(), stmt)
        return _located(gast.Assign(targets=[stmt.target], value=stmt.value, type_comment=None), stmt)
    if _names_a_lambda(stmt):
        return _def(stmt.targets[0].id, stmt.value, stmt)
    return stmt


def _names_a_lambda(stmt: Any) -> bool:
    """``sq = lambda t: t * t``."""
    return (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, gast.Lambda))


def _located(new: Any, old: Any) -> Any:
    for name in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
        setattr(new, name, getattr(old, name, None))
    return new
