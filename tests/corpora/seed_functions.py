"""The worked examples of the founding documents (shared/seeds), as user code."""
import numpy as np


def quadratic(a, b, c, x):
    """Seed 000: y = a*x**2 + b*x + c."""
    return a * x ** 2 + b * x + c


def tensor_example(x, y):
    """Seed 002: z = x*x + x*y; at (3, 10) the gradient is (16, 3)."""
    return x * x + x * y


def rational(x, y):
    """Seed 003: f = (x+1)(x-y)/(x+y+1); at (3, 2) the gradient is (13/18, -7/9)."""
    return (x + 1) * (x - y) / (x + y + 1)


def rational_by_steps(x, y):
    """Seed 003 again, written one operation per line as the seed's trace."""
    a = x + 1.0
    b = x - y
    c = a * b
    d = a + y
    return c / d


def square_plus_product(x, y):
    """Seed 004: f = x**2 + x*y; at (2, 3) the gradient is (7, 2)."""
    return x ** 2 + x * y


def deblur_loss(guess, observed):
    """Seed 004's de-blurring loss: sum((blur3x3(guess) - observed)**2), edge-padded 3x3 box blur."""
    padded = np.pad(guess, 1, mode="edge")
    blurred = (padded[:-2, :-2] + padded[:-2, 1:-1] + padded[:-2, 2:]
               + padded[1:-1, :-2] + padded[1:-1, 1:-1] + padded[1:-1, 2:]
               + padded[2:, :-2] + padded[2:, 1:-1] + padded[2:, 2:]) / 9.0
    return np.sum((blurred - observed) ** 2)


def deblur_loss_loops(guess, observed):
    """The same loss with explicit Python loops over pixels and a local output image."""
    rows, cols = guess.shape
    padded = np.pad(guess, 1, mode="edge")
    blurred = np.zeros((rows, cols))
    for i in range(rows):
        for j in range(cols):
            total = 0.0
            for di in range(3):
                for dj in range(3):
                    total += padded[i + di, j + dj]
            blurred[i, j] = total / 9.0
    loss = 0.0
    for i in range(rows):
        for j in range(cols):
            loss = loss + (blurred[i, j] - observed[i, j]) ** 2
    return loss
