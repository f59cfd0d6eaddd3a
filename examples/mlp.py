"""Training a small neural network with s2s_ad: a 2-16-1 tanh network on two moons.

The network, its loss and the data are plain NumPy. s2s_ad.value_and_grad
differentiates the loss with respect to the four weight arrays at once, and
plain full-batch gradient descent trains the network: accuracy rises from
about a coin toss to nearly every point classified correctly.

Run: python examples/mlp.py [--epochs N]
"""
import argparse

import numpy as np

import s2s_ad


def two_moons(points, noise=0.2, seed=0):
    """Two interleaved half circles in the plane, labelled 0 and 1."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, points)
    angle = rng.uniform(0, np.pi, points)
    upper = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    lower = np.stack([1 - np.cos(angle), 0.5 - np.sin(angle)], axis=1)
    inputs = np.where(labels[:, None] == 0, upper, lower)
    return inputs + rng.normal(0, noise, inputs.shape), labels.astype(float)


def logits(inputs, w1, b1, w2, b2):
    """One tanh hidden layer; the output is a score, positive for class 1."""
    hidden = np.tanh(inputs @ w1 + b1)
    return hidden @ w2 + b2


def loss(w1, b1, w2, b2, inputs, labels):
    """Mean binary cross-entropy of the scores, written to be safe for large scores."""
    z = logits(inputs, w1, b1, w2, b2)
    return np.mean(np.maximum(z, 0) - z * labels + np.log1p(np.exp(-np.abs(z))))


def accuracy(weights, inputs, labels):
    """Fraction of points on the right side of the decision boundary."""
    return float(np.mean((logits(inputs, *weights) > 0) == (labels == 1)))


def initial_weights(hidden=16, seed=0):
    """Random first layer, small random second layer, zero biases: [w1, b1, w2, b2]."""
    rng = np.random.default_rng(seed)
    return [rng.normal(0, 1.0, (2, hidden)), np.zeros(hidden), rng.normal(0, 1 / np.sqrt(hidden), hidden), 0.0]


def train(weights, inputs, labels, epochs, learning_rate=0.5, report_every=200):
    """Full-batch gradient descent on all four weight arrays."""
    loss_and_gradients = s2s_ad.value_and_grad(loss, wrt=("w1", "b1", "w2", "b2"))
    for epoch in range(epochs):
        value, gradients = loss_and_gradients(*weights, inputs, labels)
        if epoch % report_every == 0:
            print(f"epoch {epoch:>5}: loss {value:.4f}  accuracy {accuracy(weights, inputs, labels):.1%}")
        weights = [w - learning_rate * g for w, g in zip(weights, gradients)]
    print(f"epoch {epochs:>5}: loss {loss(*weights, inputs, labels):.4f}  accuracy {accuracy(weights, inputs, labels):.1%}")
    return weights


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=2000)
    options = parser.parse_args()

    inputs, labels = two_moons(300)
    test_inputs, test_labels = two_moons(300, seed=2)
    weights = initial_weights()
    print(f"two moons: {len(labels)} training points, a 2-16-1 tanh network ({sum(np.size(w) for w in weights)} weights)")
    start = accuracy(weights, inputs, labels)
    weights = train(weights, inputs, labels, options.epochs)
    end = accuracy(weights, inputs, labels)
    print(f"training accuracy: {start:.1%} -> {end:.1%}")
    print(f"accuracy on {len(test_labels)} new points: {accuracy(weights, test_inputs, test_labels):.1%}")


if __name__ == "__main__":
    main()
