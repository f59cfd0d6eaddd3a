import numpy as np
import s2s_ad

def babylonian(a):
    x = a
    err = 1.0
    while s2s_ad.fixed_point(err > 1e-13):
        x_new = 0.5 * (x + a / x)
        err = abs(x_new - x)
        x = x_new
    return x

def babylonian_plain(a):
    x = a
    err = 1.0
    while err > 1e-13:
        x_new = 0.5 * (x + a / x)
        err = abs(x_new - x)
        x = x_new
    return x

A = np.array([[0.3, 0.1, 0.0], [0.0, 0.2, 0.1], [0.1, 0.0, 0.4]])

def equilibrium(p, b):
    x = np.zeros(3)
    y = np.sin(b)          # read before the loop and after it
    err = 1.0
    while s2s_ad.fixed_point(err > 1e-13):
        x_new = np.tanh(A @ x * p) + b
        err = np.max(np.abs(x_new - x))
        x = x_new
    return np.sum(x ** 2) + np.sum(y * x)

def equilibrium_plain(p, b):
    x = np.zeros(3)
    y = np.sin(b)
    err = 1.0
    while err > 1e-13:
        x_new = np.tanh(A @ x * p) + b
        err = np.max(np.abs(x_new - x))
        x = x_new
    return np.sum(x ** 2) + np.sum(y * x)

def step(x, p):
    return np.cos(p * x) * 0.5

def with_helper_and_branch(p, x0):
    x = x0 * 1.0
    err = 1.0
    k = 0
    while s2s_ad.fixed_point(err > 1e-14):
        if k % 2 == 0:
            x_new = step(x, p)
        else:
            x_new = 0.5 * x + 0.5 * step(x, p)
        err = abs(x_new - x)
        x = x_new
        k = k + 1
    return x * x0   # x0 also used directly

def in_a_loop(p, n):
    total = 0.0
    for i in range(n):
        x = 0.0
        err = 1.0
        while s2s_ad.fixed_point(err > 1e-13):
            x_new = 0.3 * np.sin(x + i) + p
            err = abs(x_new - x)
            x = x_new
        total = total + x * x
    return total

def never_runs(a):
    x = a * 2.0
    err = 0.0
    while s2s_ad.fixed_point(err > 1.0):
        x_new = 0.5 * x
        err = abs(x_new - x)
        x = x_new
    return x * a

def two_states(p):
    u = 1.0
    v = np.array([0.5, 0.5])
    err = 1.0
    while s2s_ad.fixed_point(err > 1e-13):
        u_new = 0.5 * np.cos(u) + 0.1 * np.sum(v) * p
        v_new = 0.25 * np.tanh(v + u) + p
        err = abs(u_new - u) + np.sum(np.abs(v_new - v))
        u = u_new
        v = v_new
    return u + np.sum(v ** 2)


def jacobi_like(p, c):
    x = 0.0
    y = 0.0
    err = 1.0
    while s2s_ad.fixed_point(err > 1e-13):
        s = 0.0
        for j in range(3):
            s = s + np.sin(x * c[j]) * p
        x_new = 0.3 * s + 0.1
        y_new = 0.5 * y + x_new * c[0]
        err = abs(x_new - x) + abs(y_new - y)
        x = x_new
        y = y_new
    return x + y * y
c = np.array([0.2, 0.5, 0.9])
