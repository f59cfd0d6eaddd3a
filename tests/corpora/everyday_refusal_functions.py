"""Functions for tests/programs/test_everyday_refusals.py, written as users write them: string arguments
that pick a loss or an activation, dict comprehensions and loops over known keys, in-place
updates through a view of a local array."""
import numpy as np


# --- 1. string arguments --------------------------------------------------------------------------

def l2(r):
    return np.sum(r ** 2)


def l1(r):
    return np.sum(np.abs(r))


LOSSES = {
    "l2": l2,
    "l1": l1,
    "huber": lambda r: np.sum(np.where(np.abs(r) < 1.0, 0.5 * r ** 2, np.abs(r) - 0.5)),
}


def loss_by_table(w, x, y, kind="l2"):
    r = x @ w - y
    return LOSSES[kind](r)


def loss_by_branches(w, x, y, kind="l2"):
    r = x @ w - y
    if kind == "l2":
        return np.mean(r ** 2)
    elif kind == "l1":
        return np.mean(np.abs(r))
    elif kind == "log-cosh":
        return np.mean(np.log(np.cosh(r)))
    else:
        raise ValueError(f"unknown loss {kind}")


def activate(z, name):
    return getattr(np, name)(z)


def network(w, x, activation="tanh"):
    h = activate(x @ w, activation)
    return np.sum(h ** 2)


def penalised(w, reg=None, strength=0.1):
    total = np.sum(np.sin(w) ** 2)
    if reg is None:
        return total
    if reg == "l1":
        return total + strength * np.sum(np.abs(w))
    return total + strength * np.sum(w ** 2)


def loss_vector(w, kind):
    """An array result picked by a string: for jacobians and vjp."""
    return LOSSES[kind](w) * np.cos(w)


def loss_unknown_key(w, kind):
    return LOSSES[kind](w)


def mode_in_loop(w, mode):
    total = 0.0
    for i in range(3):
        if mode == "sum":
            total = total + np.sum(w * i)
        else:
            total = total + np.prod(w) * i
    return total


def checked_kind(w, kind):
    """A raise a string argument chooses, inside a loop and a helper."""
    def pick(v):
        if kind == "sq":
            return v * v
        raise KeyError(f"no such kind: {kind}")
    total = 0.0
    for i in range(2):
        total = total + np.sum(pick(w) * i)
    return total


def pick_layer(params, x, which):
    w = params[which]
    return np.sum(np.tanh(x @ w))


# --- 2. dict comprehensions, loops over known keys, generators consumed whole --------------------

NAMES = ("w", "b")


def sgd_step_loss(params, x, y, lr):
    """One step of gradient descent written the way a training loop writes it, then the loss."""
    def loss(p):
        return np.mean((x @ p["w"] + p["b"] - y) ** 2)
    r = x @ params["w"] + params["b"] - y
    grads = {"w": 2 * x.T @ r / len(y), "b": 2 * np.mean(r)}
    new = {k: v - lr * grads[k] for k, v in params.items()}
    return loss(new)


def l2_penalty(params):
    total = 0.0
    for name in ["w", "b"]:
        total = total + np.sum(params[name] ** 2)
    return total


def penalty_by_module_names(params, scale):
    return scale * sum(np.sum(params[name] ** 2) for name in NAMES)


def sum_of_generator(params):
    return sum(np.sum(np.sin(v) ** 2) for v in params.values())


def largest_norm(params):
    return max(np.sum(v ** 2) for v in params.values())


def zeros_then_fill(x):
    acc = {name: np.zeros(3) for name in ("w", "b")}
    acc["w"] = acc["w"] + np.sin(x)
    acc["b"] = acc["b"] + x ** 2
    return np.sum(acc["w"] * acc["b"])


def filtered_comprehension(params):
    scaled = {k: 3.0 * v for k, v in params.items() if k != "b"}
    return sum(np.sum(v ** 3) for v in scaled.values()) + len(scaled)


def comprehension_over_range(x):
    parts = {i: x[i] ** (i + 1) for i in range(3)}
    return parts[0] + parts[1] * parts[2]


def enumerated_names(params):
    total = 0.0
    for i, name in enumerate(NAMES):
        total = total + (i + 1.0) * np.sum(np.tanh(params[name]))
    return total


def comprehension_with_runtime_keys(x, n):
    parts = {i: x[i] for i in range(n)}
    return parts[0]


def stops_at_a_name(params, stop):
    total = 0.0
    for name in ["w", "b", "c"]:
        if name == stop:
            break
        total = total + 1.0
    return total * np.sum(params ** 2)


# --- 3. in-place updates through a view of a local array -----------------------------------------

def scale_a_row(x):
    m = np.zeros((3, 3))
    m[0] = x
    m[1] = x ** 2
    m[2] = np.sin(x)
    row = m[1]
    row *= 3.0
    return np.sum(np.sin(m)) + np.sum(row ** 2)


def add_to_a_column(x, v):
    m = np.ones((3, 4)) * x[:, None]
    col = m[:, 0]
    col += v * x
    return np.sum(m ** 3) + np.prod(col)


def update_a_block_in_a_loop(x):
    m = np.zeros((4, 3)) + np.cos(x)
    for i in range(3):
        block = m[1:3, :]
        block *= x
        block -= 0.1 * i
    return np.sum(m * np.arange(12.0).reshape(4, 3)) + np.sum(block)


def view_taken_before_the_loop(x):
    m = np.zeros((4, 3)) + np.cos(x)
    block = m[1:3, :]
    for i in range(3):
        block *= x
        block += 0.1 * i
    return np.sum(m * np.arange(12.0).reshape(4, 3)) + np.sum(np.sin(block))


def view_rebound_in_the_loop(x):
    m = np.zeros((4, 3)) + np.cos(x)
    block = m[1:3, :]
    for i in range(3):
        block *= x
        block = block * 2.0
    return np.sum(m) + np.sum(block)


def row_of_a_matrix_of_unknown_rank(x):
    m = np.einsum("i,j->ij", x, x)  # (einsum declares no rank for its result)
    row = m[1]
    row *= 3.0
    return np.sum(np.sin(m)) + np.sum(row)


def view_of_an_argument(m):
    row = m[1]
    row *= 3.0
    return np.sum(row)


def view_by_a_computed_index(x, i):
    m = np.zeros((3, 3)) + x
    row = m[i]
    row *= 3.0
    return np.sum(m)


def vector_of_a_view_update(x):
    m = np.zeros((2, 3)) + np.sin(x)
    tail = m[0, 1:]
    tail **= 2
    return m[0] + m[1] * x


def slice_read_after_a_write(x):
    out = np.zeros(3)
    first_two = out[0:2]
    out[0] = 2.0 * x[0]
    return np.sum(first_two) * x[1]


def column_read_in_a_loop_that_writes(x):
    m = np.zeros((3, 3))
    col = m[:, 1]
    total = 0.0
    for i in range(3):
        m[i, :] = x * (i + 1.0)
        total = total + np.sum(col * x)
    return total + np.sum(np.sin(col))


def pipeline_of_named_steps(x, steps="sin,square"):
    out = x
    for step in steps.lower().split(","):
        if step == "sin":
            out = np.sin(out)
        elif step.startswith("sq"):
            out = out ** 2
        else:
            raise ValueError(f"unknown step {step}")
    return np.sum(out)


def raise_in_one_of_two_defs(x, kind, flag):
    if flag > 0:
        def f(v):
            if kind == "bad":
                raise ValueError("bad kind")
            return v * 2.0
    else:
        def f(v):
            return v * 3.0
    y = f(x)
    return np.sum(y ** 2)


def raise_in_a_conditional_expression(x, kind, flag):
    def bad(v):
        if kind == "bad":
            raise ValueError("bad kind")
        return v
    y = bad(x) if flag > 0 else x * 3.0
    return np.sum(y ** 2)


ACTIVATIONS = {"relu": lambda z: np.maximum(z, 0.0), "tanh": np.tanh}


def guarded_activation(x, kind):
    if kind in ("relu", "tanh"):
        h = ACTIVATIONS[kind](x)
    else:
        raise ValueError(f"unsupported activation {kind}")
    return np.sum(h ** 2)


def normalise_rows_in_a_loop(x):
    m = np.zeros((3, 3))
    m[0] = np.exp(x)
    m[1] = np.exp(-x)
    m[2] = x ** 2 + 1.0
    for i in range(3):
        row = m[i]
        row /= np.sum(row)
    return np.sum(m * np.arange(9.0).reshape(3, 3))


def scale_columns_backwards(x):
    m = np.ones((2, 3)) * x
    for j in reversed(range(3)):
        col = m[:, j]
        col *= x[j] + 1.0
    return np.sum(np.sin(m))


def view_by_a_computed_number(x):
    m = np.zeros((3, 3)) + x
    for i in range(2):
        k = i + 1
        row = m[k]
        row *= 3.0
    return np.sum(m)


def square_rows_in_a_loop(x):
    m = np.zeros((2, 3))
    m[0] = np.sin(x)
    m[1] = x * 2.0
    for i in range(2):
        row = m[i]
        row *= row
        row += x * row
    return np.sum(m ** 2) + np.sum(row)


def row_carried_through_a_while_loop(x):
    m = np.zeros((2, 3))
    m[0] = x
    m[1] = np.cos(x)
    row = m[1, :]
    total = 0.0
    k = 0
    while k < 3:
        row *= x
        m[0] = m[0] + row
        total = total + np.sum(row * m[0])
        k = k + 1
    return total + np.sum(m ** 2)


def _padded(a, c):
    return np.pad(a, 1, constant_values=c)


def chosen_by_expression(a, c, kind):
    """A conditional expression on a string argument: only the part it chooses exists."""
    return np.sum(_padded(a, c)) if kind == "pad" else np.sum(a * c)


def scaled_by_and_or(a, c, kind):
    scale = kind == "double" and 2.0 or 1.0
    return np.sum(a * c) * scale
