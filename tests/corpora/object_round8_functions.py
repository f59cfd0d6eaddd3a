"""Issue 33, round 8: lists of objects of the user's class built by a list comprehension or by append in
a loop whose length is known while transforming (a tuple or list display, a parameter given one, zip and
enumerate of such, range with constant bounds), in the function itself and in a class's ``__init__``;
and the loops whose length is not known, refused at the append's (or comprehension's) line."""
import numpy as np


class Layer:
    def __init__(self, w):
        self.w = w

    def forward(self, h):
        return np.tanh(self.w * h)


class Dense:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def forward(self, h):
        return np.tanh(self.W @ h + self.b)


def comprehension_in_the_function(x):
    layers = [Layer(w) for w in (x[0], x[1], 0.5)]
    h = x
    for l in layers:
        h = l.forward(h)
    return np.sum(h)


class AppendedNet:
    def __init__(self, ws):
        self.layers = []
        for w in ws:
            self.layers.append(Layer(w))

    def forward(self, h):
        for l in self.layers:
            h = l.forward(h)
        return h


def appended_in_init(x):
    return np.sum(AppendedNet([x[0], x[1], 0.5]).forward(x))


class ComprehendedNet:
    def __init__(self, ws):
        self.layers = [Layer(w) for w in ws]

    def forward(self, h):
        for l in self.layers:
            h = l.forward(h)
        return h


def comprehension_in_init(x):
    return np.sum(ComprehendedNet([x[0], x[1], 0.5]).forward(x))


class MLP:
    def __init__(self, Ws, bs):
        self.layers = [Dense(W, b) for W, b in zip(Ws, bs)]

    def forward(self, h):
        for l in self.layers:
            h = l.forward(h)
        return h


def zip_of_weights_and_biases(x):
    W1 = np.outer(x, x) * 0.3
    W2 = np.eye(3) * x[0]
    return np.sum(MLP([W1, W2], [x, x * 0.5]).forward(x))


def over_a_constant_range(x):
    layers = [Layer(x[i]) for i in range(3)]
    h = x
    for l in layers:
        h = l.forward(h)
    return np.sum(h)


def enumerated(x):
    layers = []
    for i, w in enumerate((x[0], x[2])):
        layers.append(Layer(w * (i + 1)))
    h = x
    for l in layers:
        h = l.forward(h)
    return np.sum(h)


def appended_over_an_array(x):  # refused: x's length is known only where it runs
    layers = []
    for w in x:
        layers.append(Layer(w))
    h = x
    for l in layers:
        h = l.forward(h)
    return np.sum(h)


def comprehension_over_an_array(x):  # refused, at the comprehension's line
    layers = [Layer(w) for w in x]
    h = x
    for l in layers:
        h = l.forward(h)
    return np.sum(h)


def made_in_a_loop_run_as_a_loop(x, n):  # the list is made afresh in each step: no refusal
    h = x
    for _ in range(n):
        layers = [Layer(w) for w in (x[0], 0.5)]
        for l in layers:
            h = l.forward(h)
        h = ComprehendedNet((x[1], 0.3)).forward(h)
    return np.sum(h)
