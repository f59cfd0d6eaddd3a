"""A loop with a carried value: s <- r s (1 - s) + 0.001 x, n times.

Run: python examples/logistic.py   (prints the adjoint: a forward loop that records
s on the tape, and a reverse loop that pops it)
"""
import s2s_ad


def logistic(r, x, n):
    s = 0.5
    for i in range(n):
        s = r * s * (1 - s) + 0.001 * x
    return s


if __name__ == "__main__":
    df = s2s_ad.grad(logistic, wrt=("r", "x"))
    d_r, d_x = df(3.1, 0.2, 50)
    print(df.source)
    h = 1e-6
    fd_r = (logistic(3.1 + h, 0.2, 50) - logistic(3.1 - h, 0.2, 50)) / (2 * h)
    print(f"d/dr = {d_r:.6f} (finite differences: {fd_r:.6f}),  d/dx = {d_x:.6f}")
