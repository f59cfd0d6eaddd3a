"""Objects recognised by identity: the one place s2s_ad keys anything by an object's ``id``.

Its one job: let a mapping, a set or a dict key stand for *this* object, not an equal one, for
objects of any kind (unhashable ones too: a list, a dict, an array; and ones whose ``==`` says
something else: IR expressions, which compare by value), without the hazard of a bare ``id``:
an id is only unique among live objects, and is reused once its object is gone.

Invariants:

* ``Identity``, ``IdentityMap`` and ``IdentitySet`` hold each object they stand for (a key, a
  member) strongly for as long as it is in them, so its id cannot be reused while it is there.
* ``WeakIdentity`` and ``WeakIdentityMap`` hold it weakly: a weak key whose object is gone equals
  no other key (an object given that id since is another key); a ``WeakIdentityMap`` entry goes
  when its key does (an object that takes no weak reference is refused with ``TypeError``).
* Equality is ``is``: two equal but distinct objects are two keys.
* Iteration follows insertion order, as a dict's.
"""
from __future__ import annotations

import weakref
from typing import Any, Iterable, Iterator, MutableMapping, MutableSet, Optional, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Identity:
    """A dict key (or part of one: ``(Identity(scope), name)``) standing for ``obj`` by identity,
    holding it."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Identity) and other.obj is self.obj

    def __repr__(self) -> str:
        return f"Identity({self.obj!r})"


class WeakIdentity:
    """A dict key standing for ``obj`` by identity, holding it weakly (``TypeError`` for an object
    that takes no weak reference).  Once ``obj`` is gone the key equals only itself."""

    __slots__ = ("ref", "_hash")

    def __init__(self, obj: Any) -> None:
        self.ref = weakref.ref(obj)
        self._hash = id(obj)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, WeakIdentity) or other._hash != self._hash:
            return False
        obj = self.ref()
        return obj is not None and other.ref() is obj


class IdentityMap(MutableMapping[K, V]):
    """A mapping keyed by its keys' identity, holding each key while its entry exists."""

    __slots__ = ("_entries",)

    def __init__(self, items: Iterable[tuple[K, V]] = ()) -> None:
        self._entries: dict[int, tuple[K, V]] = {}
        for key, value in items:
            self[key] = value

    def __getitem__(self, key: K) -> V:
        return self._entries[id(key)][1]

    def get(self, key: K, default: Any = None) -> Any:  # (a dict's speed: generated code is emitted through it)
        entry = self._entries.get(id(key))
        return default if entry is None else entry[1]

    def __contains__(self, key: object) -> bool:
        return id(key) in self._entries

    def __setitem__(self, key: K, value: V) -> None:
        self._entries[id(key)] = (key, value)

    def __delitem__(self, key: K) -> None:
        del self._entries[id(key)]

    def __iter__(self) -> Iterator[K]:
        return (key for key, _ in self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def __eq__(self, other: object) -> bool:  # (Mapping's would hash the keys)
        if not isinstance(other, IdentityMap):
            return NotImplemented
        return {n: value for n, (_, value) in self._entries.items()} == \
            {n: value for n, (_, value) in other._entries.items()}

    def __repr__(self) -> str:
        return f"IdentityMap({list(self._entries.values())!r})"


class WeakIdentityMap(MutableMapping[K, V]):
    """A mapping keyed by its keys' identity, holding them weakly: an entry goes when its key does."""

    __slots__ = ("_entries", "__weakref__")

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref, V]] = {}

    def _entry(self, key: Any) -> Optional[tuple[weakref.ref, V]]:
        entry = self._entries.get(id(key))
        return entry if entry is not None and entry[0]() is key else None

    def __getitem__(self, key: K) -> V:
        entry = self._entry(key)
        if entry is None:
            raise KeyError(key)
        return entry[1]

    def get(self, key: K, default: Any = None) -> Any:  # (no KeyError raised and caught for a miss)
        entry = self._entry(key)
        return default if entry is None else entry[1]

    def __contains__(self, key: object) -> bool:
        return self._entry(key) is not None

    def __setitem__(self, key: K, value: V) -> None:
        number, owner = id(key), weakref.ref(self)  # (the callback holds neither this map nor the key)

        def forget(ref: weakref.ref) -> None:  # (only its own entry: the id may be another object's by then)
            entries = getattr(owner(), "_entries", {})
            if entries.get(number, (None,))[0] is ref:
                del entries[number]

        self._entries[number] = (weakref.ref(key, forget), value)

    def __delitem__(self, key: K) -> None:
        if self._entry(key) is None:
            raise KeyError(key)
        del self._entries[id(key)]

    def __iter__(self) -> Iterator[K]:
        return (key for key in (ref() for ref, _ in list(self._entries.values())) if key is not None)

    def __len__(self) -> int:
        return len(self._entries)


class IdentitySet(MutableSet[Any]):
    """A set of objects by identity (a recursion guard's "seen"), holding each member."""

    __slots__ = ("_members",)

    def __init__(self, members: Iterable[Any] = ()) -> None:
        self._members: dict[int, Any] = {}  # id -> the member
        for member in members:
            self.add(member)

    def __contains__(self, obj: object) -> bool:
        return id(obj) in self._members

    def add(self, obj: Any) -> None:
        self._members.setdefault(id(obj), obj)

    def discard(self, obj: Any) -> None:
        self._members.pop(id(obj), None)

    def plus(self, obj: Any) -> IdentitySet:
        """A new set of these members and ``obj`` (this one unchanged: a guard for one path of a recursion)."""
        new = IdentitySet()
        new._members = dict(self._members)
        new.add(obj)
        return new

    def __iter__(self) -> Iterator[Any]:
        return iter(self._members.values())

    def __len__(self) -> int:
        return len(self._members)

    def __repr__(self) -> str:
        return f"IdentitySet({list(self._members.values())!r})"
