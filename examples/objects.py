"""Objects as people write them: fitting a predator-prey model written as a class.

The model is a plain Python class: parameters as attributes, an alternative
constructor (a classmethod), a right-hand side ``rhs``, a Runge-Kutta ``step``
calling ``rhs`` and a ``trajectory`` calling ``step``. A callable
``Polynomial`` object gives the harvest rate, and the loss picks its penalty
from a registry of functions by name. s2s_ad reads all of it from source: the
object made inside the loss is a record of its attributes, its methods are
followed through the class, and the gradient is checked here against central
differences before it drives a few steps of gradient descent.

Run: python examples/objects.py [--steps N]
"""
import argparse

import numpy as np

import s2s_ad

PENALTIES = {
    "squared": lambda r: r * r,
    "huber": lambda r: np.where(np.abs(r) < 0.5, r * r, np.abs(r) - 0.25),
}


class Polynomial:
    """c[0] + c[1] t + c[2] t**2 + ..., called as a function of t."""

    def __init__(self, coefficients):
        self.coefficients = coefficients

    def __call__(self, t):
        value = 0.0
        for c in self.coefficients[::-1]:
            value = value * t + c
        return value


class PredatorPrey:
    """Lotka-Volterra: prey x grows at a and is eaten at b x y; predators y die at c and grow at d x y."""

    def __init__(self, a, b, c, d):
        self.a = a
        self.b = b
        self.c = c
        self.d = d

    @classmethod
    def from_vector(cls, theta):
        return cls(theta[0], theta[1], theta[2], theta[3])

    def rhs(self, state, harvest):
        x, y = state[0], state[1]
        return np.array([self.a * x - self.b * x * y - harvest * x, self.d * x * y - self.c * y])

    def step(self, state, harvest, h):
        """One classical Runge-Kutta step."""
        k1 = self.rhs(state, harvest)
        k2 = self.rhs(state + 0.5 * h * k1, harvest)
        k3 = self.rhs(state + 0.5 * h * k2, harvest)
        k4 = self.rhs(state + h * k3, harvest)
        return state + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)

    def trajectory(self, state, harvest_rate, h, steps):
        path = [state]
        for k in range(steps):
            state = self.step(state, harvest_rate(k * h), h)
            path.append(state)
        return np.stack(path)


class CrowdedPredatorPrey(PredatorPrey):
    """The prey's growth limited by a carrying capacity: an override calling the base's ``rhs``
    through ``super()``, found by the class's MRO from the base's ``step``."""

    CAPACITY = 10.0

    def rhs(self, state, harvest):
        crowding = self.a * state[0] * state[0] / self.CAPACITY
        return super().rhs(state, harvest) - np.array([crowding, 0.0])


def misfit(theta, observed, harvest, h, steps):
    """Mean penalty of the simulated path's distance to the observations."""
    model = CrowdedPredatorPrey.from_vector(theta)
    path = model.trajectory(observed[0], Polynomial(harvest), h, steps)
    return np.mean(PENALTIES["squared"](path - observed))


def main(iterations):
    h, steps = 0.1, 40
    harvest = np.array([0.05, 0.01])
    truth = np.array([1.0, 0.4, 0.8, 0.3])
    observed = CrowdedPredatorPrey.from_vector(truth).trajectory(np.array([2.0, 1.0]), Polynomial(harvest), h, steps)

    theta = np.array([0.8, 0.5, 0.9, 0.25])
    value_and_grad = s2s_ad.value_and_grad(misfit)
    loss, gradient = value_and_grad(theta, observed, harvest, h, steps)
    eps = 1e-6
    differences = np.array([(misfit(theta + eps * e, observed, harvest, h, steps)
                             - misfit(theta - eps * e, observed, harvest, h, steps)) / (2 * eps) for e in np.eye(4)])
    print("gradient:            ", np.array2string(gradient, precision=6))
    print("central differences: ", np.array2string(differences, precision=6))
    print(f"largest difference: {np.max(np.abs(gradient - differences)):.1e}")

    first, rate = loss, 1e-2
    for _ in range(iterations):  # gradient descent, the step halved until the misfit decreases
        trial = theta - rate * gradient
        trial_loss, trial_gradient = value_and_grad(trial, observed, harvest, h, steps)
        if trial_loss < loss:
            theta, loss, gradient, rate = trial, trial_loss, trial_gradient, rate * 1.5
        else:
            rate = rate / 2.0
    print(f"misfit {first:.5f} -> {loss:.5f} after {iterations} steps; parameters {np.round(theta, 3)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    main(parser.parse_args().steps)
