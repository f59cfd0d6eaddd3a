"""User functions taking and returning containers (dicts, lists, tuples, namedtuples, dataclasses),
methods and partials, written the way users write them."""
from collections import namedtuple
import dataclasses
from dataclasses import dataclass

import numpy as np

from container_base import Base

Affine = namedtuple("Affine", ["w", "b"])


@dataclass
class Params:
    w: np.ndarray
    b: float


@dataclass
class Config:
    scale: float
    activation: str


def dict_loss(params, x):
    h = np.tanh(params["w"] * x + params["b"])
    return np.sum(h ** 2)


def dict_methods(params, x):
    total = 0.0
    for name, value in params.items():
        total = total + np.sum(value * x[: np.size(value)] if np.ndim(value) else value * x[0])
    scale = params.get("scale", 2.0)
    missing = params.get("missing", 0.5)
    return total * scale * missing + sum([np.sum(params[k]) ** 2 for k in params.keys()]) + \
        len(params) * np.sum(list(params.values())[0])


def mlp(layers, x):
    """A list of (W, b) pairs of different shapes."""
    h = x
    for w, b in layers:
        h = np.tanh(w @ h + b)
    return np.sum(h ** 2)


def mlp_indexed(weights, x):
    h = np.tanh(weights[0] @ x)
    h = np.tanh(weights[1] @ h)
    return np.sum(weights[-1] * h)


def nested(tree, x):
    enc = tree["encoder"]
    dec = tree["decoder"]
    z = np.tanh(enc["w"] @ x + enc["b"])
    y = dec[0] @ z + dec[1]
    return np.sum(y ** 2) + tree["scale"] * np.sum(z)


def namedtuple_loss(p, x):
    return np.sum((p.w * x + p.b) ** 2) + p[1]


def dataclass_loss(p, x):
    return np.sum(np.sin(p.w * x) * p.b)


def tuple_loss(pair, x):
    a, b = pair
    return np.sum(a * x) * b + pair[1] ** 2


def dict_built_inside(x, y):
    state = {"x": x, "y": y * 2.0}
    state["z"] = state["x"] * state["y"]
    out = {"sum": np.sum(state["z"]), "prod": np.prod(state["x"])}
    return out["sum"] + out["prod"] * state.get("y")[0]


def dict_in_branch(params, x, flag):
    d = {"a": params["w"] * x}
    if flag > 0:
        d["a"] = d["a"] * 2.0
    else:
        d["a"] = np.sin(d["a"])
    return np.sum(d["a"] ** 2)


def gradient_steps(params, x, n):
    """A few steps of descent on a quadratic, the parameters a dict carried through the loop."""
    for _ in range(n):
        residual = params["w"] * x + params["b"] - 1.0
        params = {"w": params["w"] - 0.1 * residual * x, "b": params["b"] - 0.1 * np.sum(residual)}
    return np.sum(params["w"] ** 2) + params["b"] ** 2


def helper_predict(params, x):
    return params["w"] @ x + params["b"]


def uses_helper(params, x):
    return np.sum(helper_predict(params, x) ** 2)


def with_aux(params, x):
    pred = np.tanh(params["w"] * x)
    loss = np.sum((pred - 0.5) ** 2)
    return loss, {"pred": pred, "norm": np.sum(params["w"] ** 2)}


def with_aux_scalar(x):
    y = x ** 2
    return np.sin(y), y


def make_params(x, y):
    p = Params(w=x * 2.0, b=y)
    q = Affine(x, y * 3.0)
    return np.sum(p.w * q.w) * p.b + q.b


def config_loss(params, config, x):
    out = params["w"] * x * config.scale
    if config.activation == "tanh":
        out = np.tanh(out)
    else:
        out = np.sin(out)
    return np.sum(out ** 2)


def float32_loss(params):
    return np.sum(params["w"] ** 2) + params["b"] * 3.0


def returns_dict(x, y):
    return {"s": np.sum(x * y), "v": x * np.sin(y)}


def computed_key(params, key):
    return params[key]


def dict_passed_to_numpy(params):
    return np.sum(params)


class Model:
    def __init__(self, w, scale):
        self.w = w
        self.scale = scale

    def predict(self, x):
        return np.tanh(self.w * x) * self.scale

    def loss(self, x):
        return np.sum(self.predict(x) ** 2)

    def direct(self, x, y):
        return np.sum(self.w * x * y)


@dataclass
class Linear:
    w: np.ndarray
    b: float

    def __call__(self, x):
        return self.w @ x + self.b

    def loss(self, x, target):
        return np.sum((self(x) - target) ** 2)

    def loss_via_method(self, x, target):
        return np.sum((self.forward(x) - target) ** 2)

    def forward(self, x):
        return self.w @ x + self.b


def scaled(x, scale, shift=0.0):
    return np.sum(np.sin(x * scale) + shift * x)


def alias_then_write(x):
    a = {"x": x}
    b = a
    b["x"] = 2.0 * x  # REFUSED: b is the same dict as a
    return a["x"]


def held_in_a_list_then_written(x):
    d = {"x": x}
    ds = [d]
    d["x"] = 3.0 * x  # REFUSED: d is the same dict as ds
    return ds[0]["x"]


def writes_argument_dict(p, x):
    p["w"] = x  # REFUSED: it is an argument
    return p["w"]


def fresh_dict_writes(x):
    a = {"x": x}
    a["x"] = a["x"] * 3.0
    a["y"] = x
    return a["x"] + a["y"]


def copy_then_write(p, x):
    q = dict(p)
    q["w"] = q["w"] * x
    return q["w"] + p["w"]


def membership(params, x):
    total = x * (2.0 in [1.0, 2.0])
    if "bias" in params:
        total = total + params["bias"]
    return total * params["w"]


class Pair:
    """A user type registered as a container (s2s_ad.core.containers.register)."""

    def __init__(self, first, second):
        self.first = first
        self.second = second


def pair_loss(pair, x):
    return np.sum(np.sin(pair.first * x)) * pair.second


def readme_loss(params, x):
    h = np.tanh(params["w"] @ x + params["b"])
    return np.sum(h ** 2), {"h": h}


def makes_a_plain_object(x):
    model = Model(x, 2.0)  # a record of its attributes (issue 22): test_everyday_containers_and_classes
    return model.loss(x)


def by_index(ws, x):
    total = 0.0
    for i in range(len(ws)):
        total = total + np.sum(ws[i] * x[i])
    return total


def augmented_items(x):
    d = {"w": x}
    d["w"] += 3.0 * x
    d["w"] *= x
    return d["w"]


def int_keys(d, x):
    return d[0] * x + d[1]


def iterate_keys(d):
    total = 0.0
    for k in d:
        total = total + np.sum(d[k] ** 2)
    return total


class Holder:
    def __init__(self, inner):
        self.inner = inner

    def loss(self, x):
        return np.sum(self.inner.w * x)  # REFUSED: the attribute .w of a Model object


SCALE = 0.5


def scaled_sum(params):
    return np.sum(params["w"]) * SCALE  # SCALE: this module's global, whatever the caller names SCALE


def caller_with_a_local_like_a_global(params):
    SCALE = 100.0  # noqa: N806 (the helper must not see it)
    return scaled_sum(params) + SCALE * 0.0


class Derived(Base):
    def __init__(self, w):
        self.w = w

    def loss(self, x):
        return np.sum(self.features(x) ** 2)


@dataclass
class Activated:
    w: float

    def act(self, x):
        return np.sin(self.w * x)

    def loss(self, x):
        return self.act(x) * 2.0


def act_square(self, x):
    return self.w * x * x


def flagged(params, x):
    out = params["w"] * x
    if params["use_bias"]:
        out = out + params["bias"]
    return np.sum(out ** 2)


def functional_updates(params, p, a, x):
    params = {**params, "w": params["w"] * 2.0}
    p = dataclasses.replace(p, w=p.w + x)
    a = a._replace(b=a.b * x)
    return np.sum(params["w"] * p.w) + a.b * p.b


def aux_from_branches(x):
    if x > 0:
        return x ** 2, x * 3.0
    pair = (np.sin(x), -1.0)
    return pair


def with_aux_after_a_raise(x, kind="tanh"):
    """A raise, then a (loss, aux) pair returned from both arms of an if: the path that raises never
    reaches the join, so the pair keeps its structure there."""
    s = np.sum(x)
    if not (-1e6 < s < 1e6):
        raise ValueError("out of range")
    h = np.sin(x)
    if s > 0.0:
        return s * 0.5 + np.sum(h ** 2), {"h": h, "n": 3, "tag": kind}
    else:
        return s + 1.0, {"h": h, "n": 3, "tag": kind}


def with_aux_returned_from_a_loop(x, kind="tanh"):
    """A (loss, aux) pair returned from inside a ``while True`` loop (its structure is known only at the
    end of the body): the paths that have not returned leave it unbound, and never read it."""
    h = np.sum(np.sin(x))
    k = 0
    while True:
        h = h * 0.5 + 0.1 * np.tanh(h)
        k += 1
        if k >= 3 or abs(h) < 1e-3:
            return h + np.sum(x ** 2), {"h": np.cos(x) * h, "n": 3, "tag": kind}


def with_aux_returned_in_a_loop_or_after_it(x):
    total = 0.0
    for k in range(4):
        total = total + np.sum(np.sin(x * (k + 1.0)))
        if total > 1.0:
            return total, {"k": k, "h": x * total}
    return total * 2.0, {"k": 4, "h": x}


def lstm_state_of_an_array_and_a_number(x):
    """An LSTM-style (h, c) state carried through a loop: h an array, c a number (issue 33)."""
    state = (x, 0.0)
    for t in range(3):
        h, c = state
        c = c * 0.9 + np.sum(h) * 0.1
        h = np.tanh(h + c)
        state = (h, c)
    return np.sum(state[0]) + state[1] ** 2


def state_of_two_shapes(x):
    state = (x, x[:2] * 0.5)
    for t in range(3):
        h, c = state
        c = np.tanh(c + h[1:])
        h = np.sin(h) + np.sum(c)
        state = (h, c)
    return np.sum(state[0] ** 2) + np.sum(state[1])


def dict_with_a_pair_after_a_raise(x):
    """A container holding a tuple, returned after a raise (the rest of the body is the raise's else)."""
    if not np.all(np.isfinite(x)):
        raise FloatingPointError("not finite")
    h = np.tanh(x)
    return {"y": h, "pair": (np.sum(h ** 2), x * 2.0)}


def loss_of_a_helper_with_aux(x):
    """The loss of a helper that returns a (loss, aux dict) pair from inside a loop or after it: the
    helper is lowered in place, its dict read as it builds it (Numba's inlining of helpers made a
    call nested in a call here, an SSAViolation; the Python backend refused the helper)."""
    loss, aux = with_aux_returned_in_a_loop_or_after_it(x)
    return with_aux_returned_in_a_loop_or_after_it(x * 0.5)[0] + loss * np.sum(aux["h"])
