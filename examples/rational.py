"""Seed 003: f(x, y) = (x + 1)(x - y) / (x + y + 1); at (3, 2) the gradient is (13/18, -7/9).

Run: python examples/rational.py     (prints the generated adjoint and the gradient)
"""
import s2s_ad


def f(x, y):
    a = x + 1.0
    b = x - y
    c = a * b
    d = x + y + 1.0
    return c / d


if __name__ == "__main__":
    df = s2s_ad.grad(f, wrt=("x", "y"))
    d_x, d_y = df(3.0, 2.0)
    print(df.source)
    print(f"gradient at (3, 2): ({d_x:.6f}, {d_y:.6f});  expected (13/18, -7/9) = ({13/18:.6f}, {-7/9:.6f})")
