"""User functions with loops and branches, for tests/test_control_flow.py."""
import math

import numpy as np


def logistic_loop(r, x, n):
    s = 0.5
    for i in range(n):
        s = r * s * (1 - s) + 0.001 * x
    return s


def two_branches(x, y):
    if x > y:
        z = x * y
    else:
        z = x + y
    w = z * z if z > 1 else -z
    return w + x


def nested_branches(x, y):
    if x > 0:
        if y > 0:
            out = x * y
        elif y > -1:
            out = x - y
        else:
            out = x / y
    else:
        out = y * y
    return out * x


def branch_assigns_one_side(x, y):
    z = y
    if x > 1.0:
        z = x * y
    return z * x


def boolean_conditions(x, y):
    if x > 0 and y > 0 or not x < 5:
        return x * y
    return x - y


def with_continue_and_break(x, n):
    s = 0.0
    for i in range(n):
        if s > 10:
            break
        if i == 2:
            continue
        s = s + x * i
    return s


def while_halving(x):
    k = 0
    while x > 0.1 and k < 100:
        x = x * 0.5
        k = k + 1
    return x * 3.0


def return_inside_loop(x, n):
    s = x
    for i in range(n):
        s = s * 1.5
        if s > 4.0:
            return s * x
    return s


def return_from_branch(x):
    if x > 1:
        return x * x
    return x * 3.0


def nested_loops(x, n, m):
    total = 0.0
    for i in range(n):
        row = 0.0
        for j in range(i, m):
            row = row + math.sin(x * j) * i
        total = total + row * row
    return total


def range_with_start_and_step(x, n):
    s = 0.0
    for i in range(n, 0, -2):
        s = s + x ** 2 * i
    return s


def loop_over_array_rows(w, data):
    total = 0.0
    for row in data:
        total = total + np.sum(row * w) ** 2
    return total


def enumerate_zip_reversed(x, y):
    total = 0.0
    for i, value in enumerate(x):
        total = total + value * i
    for a, b in zip(x, y):
        total = total + a * b
    for value in reversed(y):
        total = total * 0.5 + value
    return total


def reversed_range(x, n):
    s = x
    for i in reversed(range(n)):
        s = s * x + i
    return s


def loop_over_tuple(x, y):
    total = 0.0
    for v in (x, y, x * y):
        total = total + v * v
    return total


def zero_trip_while(x):
    while x > 100.0:
        x = x - 1.0
    return x * 2.0


def augmented_assignment(x, y):
    z = x
    z += y
    z *= x
    z -= 1.0
    z /= y
    return z


def ode_euler(k, y0, steps):
    """dy/dt = -k y + sin(t), by explicit Euler."""
    y = y0
    dt = 0.01
    t = 0.0
    for i in range(steps):
        y = y + dt * (-k * y + math.sin(t))
        t = t + dt
    return y


def building_heating(schedule, outside, comfort):
    """Temperature recurrence over a heating schedule, with a running cost."""
    temperature = 15.0
    cost = 0.0
    for hour in range(len(schedule)):
        heat = schedule[hour]
        temperature = temperature + 0.1 * (outside[hour] - temperature) + 0.5 * heat
        cost = cost + 0.01 * heat * heat + (temperature - comfort) ** 2
    return cost


def conditional_expression_in_loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + (x * i if i % 2 == 0 else -x)
    return s


# Regressions: each once gave a silent wrong value and gradient (merge copies made one after another).
def swap_in_a_loop(x, n):
    a, b = x, 1.0
    for i in range(n):
        a, b = b * 2.0, a
    return a * 3.0 + b


def pair_carried_through_a_loop(x, n):
    s = x
    pair = (s, 0.0)
    for i in range(n):
        pair = (s, pair[0])
        s = s * 1.5 + x
    return pair[0] * pair[1] + s


def loop_in_a_loop_that_may_not_run(x, n):
    total = 0.0
    for i in range(n):
        partial = total  # the inner loop's start: not a value the outer loop carries
        for j in range(2):
            partial = partial + x * (i + j)
        total = partial * 0.5
    return total + x
