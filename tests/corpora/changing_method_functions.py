"""Methods called for their effect on an object the function made and holds by one name alone
(``state.step(dt)`` as a statement): each of x, a vector of three numbers.  Lines marked ``# REFUSED``
are where s2s_ad refuses the function, saying why (tests/programs/test_changing_methods.py)."""
from dataclasses import dataclass

import numpy as np


class Body:
    """A particle advanced by leapfrog steps: methods calling methods that change the object."""

    def __init__(self, x, v):
        self.x = x
        self.v = v
        self.t = 0.0

    def accelerate(self, dt):
        self.v = self.v - dt * np.sin(self.x)

    def drift(self, dt):
        self.x = self.x + dt * self.v

    def step(self, dt):
        self.accelerate(0.5 * dt)
        self.drift(dt)
        self.accelerate(0.5 * dt)
        self.t += dt
        return self.t  # (dropped by the caller)


def leapfrog(x):
    body = Body(x, np.zeros_like(x))
    for _ in range(4):
        body.step(0.1)
    return np.sum(body.x ** 2) + body.t


class Descent:
    """An optimiser whose update returns early (a step too large is skipped)."""

    def __init__(self, w):
        self.w = w
        self.steps = 0

    def update(self, g, lr=0.1):
        if np.sum(g ** 2) > 100.0:
            return
        self.w = self.w - lr * g
        self.steps += 1


def optimiser_with_an_early_return(x):
    opt = Descent(x)
    for i in range(3):
        opt.update(opt.w * (i + 1.0), lr=0.05)
    opt.update(opt.w * 1e3)  # skipped: its step is too large
    return np.sum(opt.w ** 3) * opt.steps


@dataclass
class Tally:
    total: float = 0.0
    count: int = 0

    def add(self, v):
        self.total = self.total + v
        self.count = self.count + 1


def dataclass_tally_in_branches(x):
    tally = Tally()
    for v in x:
        if v > 0:
            tally.add(v * v)
        else:
            tally.add(-v)
    return tally.total / tally.count


class Grower:
    def __init__(self, s):
        self.s = s

    def grow(self, k):
        self.s = self.s * k


class TwiceGrower(Grower):
    def grow_twice(self, k):
        self.grow(k)
        self.grow(k + 1.0)


def inherited_changing_methods(x):
    g = TwiceGrower(x)
    g.grow_twice(1.5)
    g.grow(np.cos(x))
    return np.sum(g.s)


class Particle:
    def __init__(self, x):
        self.x = x
        self.v = np.ones_like(x)

    def push(self, dt):
        self.x += dt * self.v  # in place: an array another name holds sees it

    def kick(self, dt):
        self.v += dt * np.sin(self.x)


def in_place_update_seen_through_another_name(x):
    p = Particle(x * 1.0)
    start = p.x  # the same array as p.x: push changes it too
    p.push(0.5)
    p.kick(0.1)
    return np.sum(start ** 2) + np.sum(p.v * x)


class Scaled:
    def __init__(self, s):
        self.s = s

    def times(self, k):
        self.s = self.s * k
        return self


def fluent_method_called_for_its_effect(x):
    a = Scaled(x)
    a.times(2.0)
    a.times(x)
    return np.sum(a.s)


def changed_in_a_while_loop(x):
    a = Scaled(x[0] ** 2 + 1.0)
    n = 0
    while a.s < 100.0 and n < 20:
        a.times(1.7 + x[1])
        n += 1
    return a.s


class Counter:
    def __init__(self, scale):
        self.scale = scale
        self.total = 0.0

    def add(self, value):
        self.total = self.total + self.scale * value


def method_changing_an_object_another_name_holds(x):
    counter = Counter(x[0])
    alias = counter
    counter.add(x[1] ** 2)  # REFUSED
    return alias.total


def _counter_of(scale):
    return Counter(scale)


def method_changing_what_a_function_made(x):
    counter = _counter_of(x[0])
    counter.add(x[1])  # REFUSED
    return counter.total


class Handed:
    def __init__(self, v):
        self.v = v

    def doubled(self):
        self.v = _twice(self)  # REFUSED


def _twice(obj):
    return obj.v * 2.0


def method_passing_its_object_on(x):
    h = Handed(x[0])
    h.doubled()
    return h.v


class Shifter:
    def __init__(self, a):
        self.a = a

    def shift(self):
        self.a += 1.0  # REFUSED


def method_updating_an_argument_in_place(x):
    s = Shifter(x)
    s.shift()
    return np.sum(s.a ** 2)


@dataclass(frozen=True)
class Fixed:
    v: float

    def bump(self):
        self.v = self.v + 1.0  # REFUSED


def method_storing_into_a_frozen_dataclass(x):
    f = Fixed(x[0])
    f.bump()
    return f.v


class Layer:
    """A layer whose forward pass keeps its input and counts its calls: a method that changes its
    object and returns a value, called as y = layer.forward(x)."""

    def __init__(self, w):
        self.w = w
        self.cache = None
        self.calls = 0

    def forward(self, x):
        self.cache = x
        self.calls += 1
        return np.tanh(self.w * x)

    def input_norm(self):
        return np.sum(self.cache ** 2)


def caching_forward_pass(x):
    layer = Layer(x)
    h = layer.forward(x[0])
    h2 = layer.forward(h)
    return np.sum(h2) + layer.input_norm() * layer.calls


def forward_in_a_loop(x):
    layer = Layer(0.5)
    h = x
    for _ in range(3):
        h = layer.forward(h)
    return np.sum(h) * layer.calls + layer.input_norm()


class Queue:
    def __init__(self, v):
        self.items = v

    def pop_front(self):
        head = self.items[0]
        self.items = self.items[1:]
        return head

    def itself(self):
        return self


def values_popped(x):
    q = Queue(x * 2.0)
    a = q.pop_front()
    b = q.pop_front()
    return a * b + np.sum(q.items)


def method_returning_its_object(x):
    q = Queue(x)
    same = q.itself()  # REFUSED
    q.items = q.items * 2.0
    return np.sum(same.items)


class Walk:
    def __init__(self, state):
        self.state = state

    def next(self):
        self.state = self.state * 0.9 + 0.3  # REFUSED
        return self.state


def changing_calls_inside_an_expression(x):
    w = Walk(x[0])
    a, b = w.next(), w.next()
    return a * b + x[1] * w.state


class Scaler:
    """A method whose in-place update meets a number at its first call and an array at the later ones."""

    def __init__(self, b, s):
        self.b = b
        self.s = s

    def spread(self, k):
        self.s *= 0.3 * (self.b * self.s)  # a number times an array: a new array, held by the object

    def shrink(self, k):
        self.s *= 0.3 * k  # (the first call's s a number, the last's the array spread made)


def an_update_that_meets_a_number_then_an_array(x):
    sc = Scaler(x[1:3] * 1.0, x[2])
    if x[0] > 0:
        sc.shrink(0.3)
    sc.spread(x[0])
    sc.shrink(x[1])
    return np.sum(sc.b ** 2) + np.sum(sc.s ** 2)


def _doubled_items(queue):
    return queue.items * 2.0


class Helped(Queue):
    def doubled(self):
        return _doubled_items(self)  # passes its object on: fine where nothing changes the object


def values_of_methods_on_an_object_nothing_changes(x):
    q = Helped(x)
    same = q.itself()  # the object itself: nothing changes it, so two names may hold it
    twice = q.doubled()
    return np.sum(same.items * q.items) + np.sum(twice * x)
