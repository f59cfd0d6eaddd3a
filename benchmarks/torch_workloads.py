"""The workloads of ``workloads.py`` ported to PyTorch, for the ``torch`` peer.

PyTorch has no NumPy-compatible namespace, so the NumPy source cannot simply
be run with ``np`` rebound (as for autograd and JAX): each workload is written
again here, with the same maths on float64 tensors, the way someone using
PyTorch would write it.  Where PyTorch has an idiom for what the NumPy code
spells out, the port uses it, since that is what a PyTorch user would time:

* ``building`` appends each temperature to a list and stacks it at the end,
  instead of writing ``temp[t + 1]`` in place (in-place writes into a tensor
  that autograd records are legal but discouraged, and slower);
* ``deblur`` pads with ``F.pad(mode="replicate")`` and takes the 3x3 mean
  with ``F.avg_pool2d`` (the same numbers as the nine shifted slices);
* ``logsumexp_ce`` uses ``torch.log_softmax``, which subtracts the row
  maximum as the NumPy code does by hand.

``rk4`` is plain arithmetic, so the NumPy workload itself runs on tensors.
Every function takes tensors (and plain Python numbers where the NumPy one
takes them, such as ``n``) and returns a 0-dim tensor.  ``PORTS`` maps each
case name to its port; PyTorch itself is imported only when this module is.
"""
from __future__ import annotations

from typing import Callable

import torch
import torch.nn.functional as F

from benchmarks import workloads

Tensor = torch.Tensor


def rational(x: Tensor, y: Tensor) -> Tensor:
    """(x + 1)(x - y) / (x + y + 1)."""
    return (x + 1.0) * (x - y) / (x + y + 1.0)


def poly_loop(r: Tensor, x: Tensor, n: int = 1000) -> Tensor:
    """The logistic-map recurrence with a small drive, after n steps."""
    s = torch.tensor(0.5, dtype=torch.float64)
    for _ in range(n):
        s = r * s * (1.0 - s) + 0.001 * x
    return s


def building(heat: Tensor, outside: Tensor, t0: float, a: float, b: float, target: float,
             c: float) -> Tensor:
    """Temperature driven by the outside and the heating; cost of missing the target plus of energy."""
    temps = [torch.tensor(t0, dtype=torch.float64)]
    for t in range(heat.shape[0]):
        temps.append(temps[t] + a * (outside[t] - temps[t]) + b * heat[t])
    temp = torch.stack(temps)
    return torch.sum((temp - target) ** 2) + c * torch.sum(heat ** 2)


def mlp(w1: Tensor, w2: Tensor, x: Tensor, y: Tensor) -> Tensor:
    """Mean squared error of tanh(x @ w1) @ w2 against y."""
    pred = torch.tanh(x @ w1) @ w2
    return torch.mean((pred - y) ** 2)


def deblur(guess: Tensor, observed: Tensor) -> Tensor:
    """How far the blurred guess (3x3 mean, edges extended) is from the observed image."""
    padded = F.pad(guess[None, None], (1, 1, 1, 1), mode="replicate")  # pad wants batch and channel axes
    blurred = F.avg_pool2d(padded, 3, stride=1)[0, 0]
    return torch.sum((blurred - observed) ** 2)


def logsumexp_ce(logits: Tensor, onehot: Tensor) -> Tensor:
    """Mean softmax cross-entropy."""
    return -torch.sum(onehot * torch.log_softmax(logits, dim=1)) / logits.shape[0]


PORTS: dict[str, Callable[..., Tensor]] = {
    "rational": rational, "poly_loop": poly_loop, "building": building, "mlp": mlp,
    "deblur": deblur, "rk4": workloads.rk4, "logsumexp_ce": logsumexp_ce,
}
