"""Issue 33 (functions as values): a name bound to a function (``act = np.tanh``), lists and tuples
of functions (NumPy's, yours, lambdas) walked by a loop, zipped with numbers, enumerated, or called
by a constant index (tests/lowering/test_function_lists.py)."""
import numpy as np


def relu(z):
    return np.maximum(z, 0.0)


def softplus(z):
    return np.log1p(np.exp(z))


def name_bound_to_functions(x):
    act = np.tanh
    h = act(x)
    act = softplus
    h = act(h * 2.0)
    act = lambda v: v ** 2
    return np.sum(act(h))


def layers_of_functions(x):
    layers = [softplus, np.tanh, softplus]
    h = x
    for layer in layers:
        h = layer(h * 1.5) + 0.1
    return np.sum(h)


def lambdas_in_a_list(x):
    fs = [lambda v: v ** 2, lambda v: np.sin(v) * v, np.cos]
    total = 0.0
    for f in fs:
        total = total + np.sum(f(x))
    return total


def functions_zipped_with_weights(x):
    fs = (np.sin, np.cos, softplus)
    ws = [0.5, 2.0, -1.0]
    s = 0.0
    for f, w in zip(fs, ws):
        s = s + w * np.sum(f(x))
    return s


def functions_zipped_with_an_array(x):
    fs = [np.sin, np.tanh, np.exp]
    s = 0.0
    for f, scale in zip(fs, x):
        s = s + scale * np.sum(f(x))
    return s


def functions_enumerated(x):
    h = x
    for i, f in enumerate([np.tanh, softplus, np.sin]):
        h = f(h) * (i + 1.0)
    return np.sum(h)


def functions_enumerated_and_zipped(x):
    out = np.zeros(3)
    for i, (f, w) in enumerate(zip([np.sin, np.cos, np.tanh], [1.0, -2.0, 0.5])):
        out[i] = w * np.sum(f(x))
    return np.sum(out ** 2)


def functions_called_by_index(x):
    fs = [np.sin, lambda v: v * 3.0, softplus]
    return np.sum(fs[0](x) * fs[-1](x) + fs[1](x))


def functions_in_a_loop_in_a_loop(x):
    acts = (np.tanh, lambda v: v * 0.5)
    h = x
    for step in range(3):
        for act in acts:
            h = act(h) + x
    return np.sum(h ** 2)


def lambda_reads_a_name_when_called(x):
    k = 2.0
    fs = [lambda v: v * k, np.sin]
    k = 3.0  # (Python's lambda reads k where it is called: 3.0)
    return np.sum(fs[0](x) + fs[1](x))


def dict_of_functions_by_key(x):
    acts = {"tanh": np.tanh, "square": lambda v: v ** 2, "soft": softplus}
    return np.sum(acts["tanh"](x) + acts["square"](x) * acts["soft"](x))


def loop_over_the_keys_of_a_dict_of_functions(x):
    acts = {"tanh": np.tanh, "square": lambda v: v ** 2}
    total = 0.0
    for name in acts:
        total = total + np.sum(acts[name](x))
    return total


ACTIVATIONS = [np.tanh, softplus, np.sin]
LOSSES = {"l2": lambda r: np.sum(r ** 2), "l1_smooth": lambda e: np.sum(np.sqrt(e ** 2 + 0.01))}


def module_level_list_of_functions(x):
    h = x
    for act in ACTIVATIONS:
        h = act(h) * 1.2
    return np.sum(h) + LOSSES["l1_smooth"](x)


def module_level_dict_item_bound_to_a_name(x, loss="l1_smooth"):
    measure = LOSSES[loss]  # (the code is made for the string the call passes)
    return measure(x - 0.3) + measure(x * x)


def module_level_dict_of_functions_looped(x):
    total = 0.0
    for name in LOSSES:
        total = total + LOSSES[name](x - 0.1)
    return total


def lambda_made_in_a_loop_called_after_it(x):
    for k in range(3):
        g = lambda v: np.sin(v) * k + v  # k is read when g is called: 2, after the loop
    return np.sum(g(x) ** 2)


def def_made_in_a_loop_called_after_it(x):
    h = x
    for k in range(1, 4):
        def g(v):
            return np.tanh(v * k) + h
        h = h * 0.5
    return np.sum(g(x))


def lambdas_appended_with_their_defaults(x):
    fs = []
    for k in range(3):
        fs.append(lambda v, k=k: np.sin(v) * (k + 1.0))  # each keeps its own k
    return np.sum(sum(fn(x) for fn in fs) ** 2)


def lambdas_appended_read_names_when_called(x):
    w = 1.5
    fs = []
    for k in range(3):
        fs.append(lambda v: v * w + k)  # (k is 2 for each, where they are called)
    total = 0.0
    for fn in fs:
        total = total + np.sum(np.tanh(fn(x)))
    return total


def lambdas_appended_called_by_index(x):
    fs = [np.cos]
    for k in range(2):
        fs.append(lambda v, c=x[k]: v * c)
    return np.sum(fs[0](x) * fs[-1](x) + fs[1](x))


def functions_paired_with_numbers(x):
    layers = [(np.tanh, 1.5), (np.sin, 0.5), (lambda v: v ** 2, -1.0)]
    for act, s in layers:
        x = act(x) * s
    return np.sum(x)


def functions_paired_with_weights_appended(x):
    layers = []
    for k in range(3):
        layers.append((np.tanh, x[k] + 0.5))
    h = x
    for i, (act, w) in enumerate(layers):
        h = act(h * w) + i
    return np.sum(h ** 2)


def lambda_reading_a_dict_made_in_a_loop_run_as_a_loop(x):
    s = 0.0
    for v in x:
        p = {"w": v}
        f = lambda u: u * p["w"]  # (called in the loop only: p need not be carried out of it)
        s = s + np.sum(np.sin(f(x)))
    return s


def lambda_made_in_a_loop_that_may_not_run(x):
    for v in x:
        g = lambda u: u * v
    return np.sum(g(x))


def lambda_made_in_an_empty_loop(x):
    for k in range(0):
        g = lambda u: u * k
    return np.sum(g(x))


def lambda_appended_in_a_loop_run_as_a_loop(x):
    fs = []
    for v in x:
        fs.append(lambda u, v=v: u * v)
    return np.sum(fs[0](x))


def function_chosen_in_a_branch(x):
    if x[0] > 0:
        act = np.tanh
    else:
        act = relu
    return np.sum(act(x))


def list_of_functions_returned(x):
    fs = [np.sin, np.cos]
    return fs


def item_out_of_range(x):
    fs = [np.sin]
    return np.sum(fs[1](x))


def key_not_in_the_dict(x):
    acts = {"tanh": np.tanh}
    return np.sum(acts["relu"](x))
