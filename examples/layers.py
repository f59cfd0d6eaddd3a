"""Objects as people write them: a small network written as a class hierarchy.

``Layer`` computes ``h W + b``; ``Tanh`` derives from it, its ``forward`` calling the base's through
``super()``; ``Model`` holds a list of layers, its ``forward`` walking them and its ``loss`` calling
``forward``; an activation is picked from a registry by name. The model is made inside the loss
from a dict of parameters, and s2s_ad reads every class from source (methods found by the
class's MRO, the list of layers unrolled). The gradient is checked against central differences,
then a few hundred steps of gradient descent fit the network to a curve.

Run: python examples/layers.py [--steps N]
"""
import argparse

import numpy as np

import s2s_ad


def softplus(z):
    return np.log1p(np.exp(-np.abs(z))) + np.maximum(z, 0.0)


ACTIVATIONS = {
    "tanh": np.tanh,
    "softplus": softplus,
}


class Layer:
    """An affine map of a batch of rows: h W + b."""

    def __init__(self, W, b):
        self.W = W
        self.b = b

    def forward(self, h):
        return h @ self.W + self.b


class Activated(Layer):
    """The affine map, then an activation chosen by name from the registry."""

    def __init__(self, W, b, activation):
        super().__init__(W, b)
        self.activation = activation

    def forward(self, h):
        return ACTIVATIONS[self.activation](super().forward(h))


class Model:
    def __init__(self, layers):
        self.layers = layers

    def forward(self, x):
        h = x
        for layer in self.layers:
            h = layer.forward(h)
        return h

    def loss(self, x, y):
        r = self.forward(x)[:, 0] - y
        return np.mean(r * r)


def loss(params, x, y):
    model = Model([Activated(params["W1"], params["b1"], "tanh"),
                   Activated(params["W2"], params["b2"], "softplus"),
                   Layer(params["W3"], params["b3"])])
    return model.loss(x, y)


def initial_parameters(seed=0):
    rng = np.random.default_rng(seed)
    return {"W1": rng.normal(0.0, 1.0, (1, 12)), "b1": np.zeros(12),
            "W2": rng.normal(0.0, 0.3, (12, 8)), "b2": np.zeros(8),
            "W3": rng.normal(0.0, 0.3, (8, 1)), "b3": np.zeros(1)}


def central_differences(params, x, y, name, eps=1e-6):
    g = np.zeros_like(params[name])
    for index in np.ndindex(g.shape):
        plus = {k: v.copy() for k, v in params.items()}
        minus = {k: v.copy() for k, v in params.items()}
        plus[name][index] += eps
        minus[name][index] -= eps
        g[index] = (loss(plus, x, y) - loss(minus, x, y)) / (2 * eps)
    return g


def main(steps):
    x = np.linspace(-2.0, 2.0, 40)[:, None]
    y = np.sin(2.0 * x[:, 0]) + 0.5 * x[:, 0]
    params = initial_parameters()
    value_and_grad = s2s_ad.value_and_grad(loss)
    first, gradient = value_and_grad(params, x, y)
    largest = max(np.max(np.abs(gradient[k] - central_differences(params, x, y, k))) for k in params)
    print(f"largest difference from central differences: {largest:.1e}")

    value, rate = first, 0.05
    for _ in range(steps):  # gradient descent, the step halved until the loss decreases
        trial = {k: params[k] - rate * gradient[k] for k in params}
        trial_value, trial_gradient = value_and_grad(trial, x, y)
        if trial_value < value:
            params, value, gradient, rate = trial, trial_value, trial_gradient, rate * 1.2
        else:
            rate = rate / 2.0
    print(f"loss {first:.4f} -> {value:.4f} after {steps} steps")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    main(parser.parse_args().steps)
