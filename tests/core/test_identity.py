"""s2s_ad.core.identity: mappings, sets and keys that recognise an object by identity, never by
``==``, holding it (strongly, or weakly where asked) so that its id is not reused while it is there."""
import gc
import weakref

import numpy as np

from s2s_ad.core.identity import Identity, IdentityMap, IdentitySet, WeakIdentity, WeakIdentityMap


class Thing:
    pass


def test_an_entry_keeps_its_key_alive():
    table: IdentityMap = IdentityMap()
    key = Thing()
    gone = weakref.ref(key)
    table[key] = "value"
    del key
    gc.collect()
    assert gone() is not None  # held by the map: its id cannot be another object's
    assert table[gone()] == "value" and list(table) == [gone()]
    del table[gone()]
    gc.collect()
    assert gone() is None


def test_equal_but_distinct_objects_are_two_keys():
    a, b = [1, 2], [1, 2]
    table: IdentityMap = IdentityMap([(a, "a"), (b, "b")])
    assert a == b and len(table) == 2
    assert table[a] == "a" and table[b] == "b"
    assert [1, 2] not in table and table.get([1, 2], "none") == "none"
    seen = IdentitySet([a])
    assert a in seen and b not in seen
    assert Identity(a) != Identity(b) and Identity(a) == Identity(a)


def test_unhashable_objects_are_keys_and_members():
    items, mapping, array = [1], {"k": 1}, np.zeros(3)
    table: IdentityMap = IdentityMap()
    for n, key in enumerate((items, mapping, array)):
        table[key] = n
    assert [table[items], table[mapping], table[array]] == [0, 1, 2]
    table.setdefault(items, 9)
    assert table[items] == 0 and list(table) == [items, mapping, array]  # (in insertion order)
    assert {(Identity(items), "x"): 1}[(Identity(items), "x")] == 1  # (part of a composite key)
    seen = IdentitySet()
    seen.add(mapping)
    seen.add(mapping)
    assert len(seen) == 1 and list(seen) == [mapping]


def test_plus_leaves_the_set_as_it_was():
    first, second = [], []
    path = IdentitySet([first])
    longer = path.plus(second)
    assert second in longer and first in longer
    assert second not in path and len(path) == 1


def test_a_weak_map_holds_its_keys_weakly_and_forgets_them():
    table: WeakIdentityMap = WeakIdentityMap()
    array = np.ones(2)
    table[array] = "SCALE"
    assert table[array] == "SCALE" and np.ones(2) not in table
    assert table.get(array) == "SCALE" and table.get(np.ones(2)) is None  # (an equal array is another key)
    del array
    gc.collect()
    assert len(table) == 0 and list(table) == []


def test_a_weak_map_refuses_what_takes_no_weak_reference():
    table: WeakIdentityMap = WeakIdentityMap()
    try:
        table[(1, 2)] = "pair"
    except TypeError:
        pass
    else:
        raise AssertionError("a tuple takes no weak reference")
    assert len(table) == 0


def test_a_weak_key_whose_object_is_gone_equals_no_other_key():
    thing = Thing()
    key, alive = WeakIdentity(thing), Thing()
    assert key == WeakIdentity(thing) and hash(key) == hash(WeakIdentity(thing))
    table = {key: 1}
    del thing
    gc.collect()
    assert key.ref() is None and key == key
    newcomer = WeakIdentity(alive)
    newcomer._hash = key._hash  # (as where the new object is given the id the gone one had)
    assert newcomer != key and key != newcomer and newcomer not in table and key in table
