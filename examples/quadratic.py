"""Seed 000: y = a*x**2 + b*x + c, with all four partial derivatives.

dy/da = x**2, dy/db = x, dy/dc = 1, dy/dx = 2*a*x + b.
Run: python examples/quadratic.py
"""
import s2s_ad


def quadratic(a, b, c, x):
    return a * x ** 2 + b * x + c


if __name__ == "__main__":
    a, b, c, x = 2.0, -3.0, 0.5, 1.5
    partials = s2s_ad.grad(quadratic, wrt=("a", "b", "c", "x"))
    d_a, d_b, d_c, d_x = partials(a, b, c, x)
    print(partials.source)
    print(f"y = {quadratic(a, b, c, x)} at a={a}, b={b}, c={c}, x={x}")
    print(f"dy/da = {d_a}  (x**2 = {x ** 2})")
    print(f"dy/db = {d_b}  (x = {x})")
    print(f"dy/dc = {d_c}  (1)")
    print(f"dy/dx = {d_x}  (2*a*x + b = {2 * a * x + b})")
