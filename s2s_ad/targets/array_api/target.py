"""Arrays of other libraries: generated code run through the array's own namespace (``ArrayAPITarget``).

Input: the adjoint (or tangent) IR, as for the NumPy target, and the
namespace ``xp`` of the arguments' arrays (``array_api_compat.array_namespace``:
PyTorch, JAX, Dask, ``array_api_strict``...).  Output: code that calls
``xp.<name>`` where the NumPy code calls ``np.<name>``, under the array API
standard's names (``np.concatenate`` -> ``xp.concat``, ``np.power`` ->
``xp.pow``, ``np.arccos`` -> ``xp.acos``), and s2s_ad's own versions,
written with ``xp`` alone, of the engine ops (``unbroadcast``,
``getitem_grad``...) and of the few NumPy functions the standard lacks
(``np.shape``, ``np.copy``, ``np.dot``...).  Nothing is converted to NumPy:
the gradient is an array of the arguments' library, computed by it.

``xp`` in generated code is the namespace *completed* (``Completed``): the
standard's functions of the library (an elementwise one handed Python
numbers alone gets them as 0-d float64 arrays, as NumPy reads them), and
the NumPy functions written here.  Arrays are created float64 where NumPy
would (``np.zeros(3)``, ``np.full(shape, 1.0)``), whatever the library's
default floating type (float32 for PyTorch).

What this target refuses, before anything runs, naming the user's line
(``TransformError``): a NumPy function that neither the standard nor this
module has (``np.linalg.*``, ``np.add.at``...), an engine op or a rule's
helper written for NumPy alone (random draws, most rules' helpers), and,
for an immutable library (JAX), a write into an array (``a[i] = v``),
which has no in-place form there.  At a call, before anything runs
(``TypeError``): arguments mixing NumPy's arrays and another library's, or
two libraries (in containers too); a PyTorch tensor that requires grad.

Ownership of the results: a JAX array is immutable, so sharing it is
harmless; a PyTorch tensor is copied where its storage is one of an
argument's or of another result's; any other library's array (no way to
ask whether memory is shared) is always copied (``xp.asarray(x, copy=True)``).

``array_api_compat`` is imported at the first call with such an array,
never before; the libraries themselves only by the user.
"""
from __future__ import annotations

import math
import threading
from typing import Any, Iterator, Optional, Sequence

import numpy as np

from ...core import arguments, containers, ir
from .rewrites import has_negative_step, range_names
from .runtime import RENAMED, Completed, Engine, Own, as_they_are, engine_names, is_number
from ...core.errors import TransformError
from ...core.identity import IdentityMap
from ..target import Capabilities, Spelling, Target, TapeForm, TupleTape, builtin_spelling, declared_spellings

def _numpy_name(obj: Any) -> Optional[str]:
    """``sin`` for ``np.sin``: the dotted name after ``np.`` of a NumPy function, where it has one."""
    for spelled in declared_spellings(obj):
        if spelled.root == "np":
            return spelled.text[len("np."):]
    return None


def _of_numpy(obj: Any) -> bool:
    return isinstance(obj, np.ufunc) or (getattr(obj, "__module__", None) or "").split(".")[0] == "numpy"


def _of_s2s_ad(obj: Any) -> bool:
    return (getattr(obj, "__module__", None) or "").split(".")[0] == "s2s_ad"


class ArrayAPITarget(Target):
    """Generated code for the arrays of one array-API namespace (see the module docstring)."""

    backend = "python"

    def __init__(self, xp: Any, library: str, mutable: bool, memory: str) -> None:
        self.xp, self.library, self.mutable, self.memory = xp, library, mutable, memory
        # adjoints of several slices added into one array in place only where writes are NumPy's (torch)
        self.capabilities = Capabilities(slices_in_place=memory == "storage")
        # NumPy's writes are seen through every view of the array (b = a[1:]; a[1] = v changes b[0]).
        # JAX has no writes; Dask's a[i] = v changes the object a alone, never another made from it:
        # for those, only writes no other name can see are written (array_api.rewrites.functional_stores).
        self.writes_through_views = library not in ("jax", "dask")
        self.name = f"array API ({library})"
        self.completed = Completed(xp)
        self._engine = Engine(xp, Own(xp), mutable)
        self._own_ops = IdentityMap((op, getattr(self._engine, name)) for op, name in engine_names().items())
        # PyTorch (and CuPy): a one-element read a[i] is a 0-d view of a, NumPy's a number (a copy)
        self.element_views = library in ("torch", "cupy")
        self.element_read = self._engine.element_read  # (one object: generated code binds it once)
        self.updated_at = self._engine.updated_at
        self._tape = TupleTape()  # (NumPy's nested tuples: the rewrites are a pass, rewrite_for_array_api)

    # -- spellings and implementations --------------------------------------------------------------

    def roots(self) -> dict[str, Any]:
        return {"xp": self.completed, "math": math}

    def spellings(self, obj: Any) -> Iterator[Spelling]:
        builtin = builtin_spelling(obj)
        if builtin is not None:
            yield builtin
            return
        name = self.standard_name(obj)
        if name is not None:
            yield Spelling(f"xp.{name}", "xp", self.completed)
            return
        for spelled in declared_spellings(obj):
            if spelled.root != "np":  # math.cos, as it is
                yield spelled

    def standard_name(self, obj: Any) -> Optional[str]:
        """``concat`` for ``np.concatenate``: the name ``xp`` has this NumPy function under, if any."""
        if not _of_numpy(obj):
            return None
        name = _numpy_name(obj)
        if name is None or "." in name:
            return None
        name = RENAMED.get(name, name)
        return name if hasattr(self.completed, name) else None

    def implementation(self, obj: Any) -> Any:
        return self._own_ops.get(obj, obj)

    def refusal(self, obj: Any) -> Optional[tuple[str, str]]:
        """Why generated code for this target cannot call ``obj``, as (construct, hint); None: it can."""
        if obj in self._own_ops or self.standard_name(obj) is not None or builtin_spelling(obj) is not None:
            return None
        if obj is self.element_read or obj is self.updated_at or any(obj is op for op in as_they_are()):
            return None
        if _of_numpy(obj):
            name = _numpy_name(obj)
            shown = f"np.{name}" if name else getattr(obj, "__qualname__", repr(obj))
            return (f"the call of {shown}", f"arrays of {self.library} are differentiated through their array API "
                    f"namespace, which has no {shown} (nor has s2s_ad a version of it for them); call it on "
                    f"NumPy arrays, or write it with functions of the array API standard")
        if _of_s2s_ad(obj):
            name = getattr(obj, "__name__", repr(obj))
            return (f"a derivative that calls s2s_ad's {name}", f"{name} is written for NumPy's arrays and has no "
                    f"version for arrays of {self.library} (see docs/api.md, 'Arrays of other libraries'); "
                    f"pass NumPy arrays")
        return None

    def check(self, fn: ir.Function) -> None:
        """Refuse, naming the user's line, a call this target has no version of, and for an immutable
        library a write into an array."""
        ranges = frozenset(range_names(fn.body))  # (a range's negative step is Python's, not the library's)
        for stmt in ir.walk(fn.body):
            if isinstance(stmt, ir.Store) and not self.writes_through_views:
                why = (f"{self.library} arrays are immutable: s2s_ad writes a[i] = v as a = a.at[i].set(v)"
                       if not self.mutable else
                       f"a write a[i] = v into a {self.library} array is not seen through the arrays made from a, "
                       f"as it is through NumPy's views: s2s_ad writes one")
                raise TransformError(f"a write into an array ({stmt.array}[...] = ...) for arrays of {self.library}",
                                     f"{why} only where no other name can see a (its own accumulators), not here; "
                                     f"build the array without writing into it (np.where, np.concatenate), or pass "
                                     f"NumPy arrays", filename=fn.filename, line=stmt.line)
            for expr in ir.exprs_of(stmt):
                if self.library == "torch" and has_negative_step(expr, ranges):
                    raise TransformError("a slice with a negative step for PyTorch tensors",
                                         "PyTorch has no negative steps (x[::-1]); write np.flip(x) (xp.flip), "
                                         "or pass NumPy arrays", filename=fn.filename, line=stmt.line)
                for call in ir.calls_in(expr):
                    if isinstance(call.fn, ir.Part):
                        continue
                    refused = self.refusal(call.fn)
                    if refused is not None:
                        raise TransformError(refused[0], refused[1], filename=fn.filename, line=stmt.line)

    def passes(self, form: str) -> tuple[str, ...]:
        # NumPy's meaning kept where the library's differs, and what it cannot run refused (rewrites.py)
        return ("rewrite_for_array_api",)

    def tape(self) -> TapeForm:
        return self._tape

    def store(self, stmt: ir.Store) -> list[ir.Stmt]:
        return [stmt]  # in place (where views would not see it, written otherwise or refused by check)

    # -- arguments and results ------------------------------------------------------------------------

    def argument_kinds(self, fn: Any, args: Sequence[Any]) -> tuple:
        """NumPy's kinds of the arguments, each of this library's arrays read by its shape alone (an
        empty NumPy array of that shape stands for it, no memory taken)."""
        return arguments.kinds_of(fn, [self._standing(a) for a in args])

    def _standing(self, value: Any) -> Any:
        """``value`` with each array of this library (in a container too) replaced by what stands for
        it in NumPy's kinds: an empty NumPy array of its shape, which takes no memory."""
        if _is_foreign_array(value):
            shape = tuple(value.shape)
            if any(n is None or (isinstance(n, float) and math.isnan(n)) for n in shape):
                raise TypeError(f"an argument of {self.library} has a shape not known yet ({shape}); "
                                "s2s_ad specialises the code on shapes: compute the chunk sizes first "
                                "(x.compute_chunk_sizes() for Dask)")
            # (a complex array stands as a complex one: ``arguments.kinds_of`` refuses it)
            complex_ = "complex" in str(getattr(value, "dtype", ""))
            return np.broadcast_to(np.empty((), dtype=np.complex128 if complex_ else np.float64), shape)
        if value.__class__ in _PLAIN or isinstance(value, (np.ndarray, np.generic)):
            return value
        structure = containers.structure_of(value)
        if isinstance(structure, containers.Tree):
            leaves = containers.leaves(value, structure)
            if any(_is_foreign_array(leaf) for leaf in leaves):
                return containers.unflatten(structure, [self._standing(leaf) for leaf in leaves])
        return value

    def like(self, primal: Any, gradient: Any) -> Any:
        """The gradient with the primal's floating dtype (a float32 tensor gives a float32 gradient)."""
        dtype = getattr(primal, "dtype", None)
        if dtype is None or not hasattr(gradient, "dtype") or gradient.dtype == dtype:
            return gradient
        if self.xp.isdtype(dtype, ("real floating", "complex floating")):
            return self.xp.astype(gradient, dtype)
        return gradient

    def check_tangent(self, fn: Any, name: str, primal: Any, tangent: Any) -> Any:
        """``jvp``'s tangent of ``primal`` as the code takes it (None: ``primal`` carries no derivative):
        for an array of this library, an array of it of the primal's shape; for a number, a float."""
        fn_name = getattr(fn, "__name__", fn)
        if not _is_foreign_array(primal):
            return arguments.checked_tangent(fn, name, primal, tangent)  # (a number: as for NumPy)
        if not self.xp.isdtype(primal.dtype, ("real floating", "complex floating")):
            if tangent is not None and not (is_number(tangent) and tangent == 0):
                raise ValueError(f"jvp of {fn_name}: {name} holds no floats, so it carries no derivative: its "
                                 "tangent must be None or zero")
            return None
        if not _is_foreign_array(tangent) or target_for(tangent) is not self:
            raise TypeError(f"jvp of {fn_name}: the tangent of {name} must be an array of {self.library}, as "
                            f"{name} is, not {type(tangent).__name__}")
        if tuple(tangent.shape) != tuple(primal.shape):
            raise ValueError(f"jvp of {fn_name}: the tangent of {name} has shape {tuple(tangent.shape)}, but "
                             f"{name} has shape {tuple(primal.shape)}; tangents are never broadcast")
        return tangent

    def handed_out(self, values: Any, held: tuple, copy_all: bool = False) -> Any:
        if self.memory == "immutable" and not copy_all:
            return values
        seen = [h for h in held if _is_foreign_array(h)]
        return self._owned(values, seen, copy_all)

    def _owned(self, value: Any, seen: list, copy_all: bool) -> Any:
        if type(value) in (tuple, list):
            return type(value)([self._owned(v, seen, copy_all) for v in value])
        if not _is_foreign_array(value):
            return value
        if copy_all or self.memory == "copy" or self._shares(value, seen):
            value = self.xp.asarray(value, copy=True)
        seen.append(value)
        return value

    def _shares(self, value: Any, seen: list) -> bool:
        """PyTorch: whether ``value``'s storage is one of ``seen``'s."""
        pointer = value.untyped_storage().data_ptr()
        return any(value is s or s.untyped_storage().data_ptr() == pointer for s in seen)

    def alone(self, gradient: Any) -> bool:
        return False  # handed_out decides


# -- one target per namespace ---------------------------------------------------------------------

_TARGETS: IdentityMap[Any, ArrayAPITarget] = IdentityMap()
_LOCK = threading.Lock()


def _is_foreign_array(value: Any) -> bool:
    """An array of a library other than NumPy that has an array API namespace."""
    return hasattr(value, "__array_namespace__") and not isinstance(value, (np.ndarray, np.generic)) \
        or _library_of(type(value)) is not None


def _library_of(cls: type) -> Optional[str]:
    """The library of an array type array-api-compat knows without ``__array_namespace__`` (PyTorch's
    tensors, Dask's arrays), else None."""
    module = str(getattr(cls, "__module__", "")).split(".")[0]  # (a Cython type's is a descriptor)
    if module == "torch" and cls.__name__ == "Tensor" or module == "dask" and cls.__name__ == "Array":
        return module
    return None


def target_for(value: Any) -> ArrayAPITarget:
    """The target of the namespace of ``value``, an array of another library (one object per namespace)."""
    try:
        from array_api_compat import array_namespace
    except ImportError:
        raise ImportError(f"arrays of {str(type(value).__module__).split('.')[0]} ({type(value).__name__}) are "
                          "differentiated through their own namespace, which needs the optional extra "
                          "array-api-compat: pip install 's2s_ad[arrays]' (s2s_ad converts nothing to NumPy)") from None
    xp = array_namespace(value)
    with _LOCK:
        found = _TARGETS.get(xp)
        if found is None:
            library = _library_name(xp)
            mutable = library != "jax"
            memory = "immutable" if library == "jax" else "storage" if library == "torch" else "copy"
            found = _TARGETS[xp] = ArrayAPITarget(xp, library, mutable, memory)
    return found


def _library_name(xp: Any) -> str:
    name = getattr(xp, "__name__", "")
    for library in ("torch", "jax", "dask", "cupy", "array_api_strict"):
        if library in name.split("."):
            return library
    return name.split(".")[-1] or "xp"


_PLAIN = (float, int, bool, str, type(None), complex)


def _arrays_in(args: Sequence[Any]) -> Iterator[Any]:
    """The arguments, each container's leaves in its place."""
    for a in args:
        if a.__class__ in _PLAIN or isinstance(a, (np.ndarray, np.generic)) or _is_foreign_array(a):
            yield a
            continue
        structure = containers.structure_of(a)
        yield from (containers.leaves(a, structure) if isinstance(structure, containers.Tree) else (a,))


def target_of_arguments(args: Sequence[Any], default: Target) -> Target:
    """The target a call with these arguments runs on: ``default`` where no argument is an array of
    another library, else that library's (refused, before anything runs, where arguments mix
    libraries, a container holds such arrays, or ``default`` is a compiler's)."""
    found: Optional[ArrayAPITarget] = None
    has_numpy = False
    for a in _arrays_in(args):
        if isinstance(a, np.ndarray):
            has_numpy = True
            continue
        if not _is_foreign_array(a):
            continue
        target = target_for(a)
        if found is not None and target is not found:
            raise TypeError(f"the arguments mix arrays of {found.library} and of {target.library}; "
                            "pass arrays of one library")
        if getattr(a, "requires_grad", False):
            raise TypeError("a tensor among the arguments requires grad; s2s_ad computes the gradient itself: "
                            "pass x.detach()")
        found = target
    if found is None:
        return default
    if has_numpy:
        raise TypeError(f"the arguments mix NumPy arrays and arrays of {found.library}; s2s_ad runs the code "
                        f"through one library's namespace and converts nothing: pass arrays of one library")
    if default.backend != "python" or not isinstance(default, Target) or default.name not in ("numpy",):
        raise TypeError(f"backend={default.backend!r} compiles code for NumPy's arrays; arrays of "
                        f"{found.library} run with backend='python' (the default)")
    return found
