"""Rules for linear algebra: matmul and ``@``, dot, outer, transpose and ``.T``, trace."""
import operator

import numpy as np

from s2s_ad.rules import adjoint, fresh_arrays, fresh_values
from s2s_ad.runtime import inverse_axes, matmul_grad_a, matmul_grad_b

_PRODUCTS = (
    {"x1": (3, 4), "x2": (4, 2)}, {"x1": (3, 4), "x2": (4,)}, {"x1": (4,), "x2": (4, 2)},
    {"x1": (4,), "x2": (4,)}, {"x1": (2, 3, 4), "x2": (4, 5)},
)


@adjoint(np.matmul, bilinear=True, examples=_PRODUCTS)
def matmul(out, x1, x2, d_out):
    d_x1 = matmul_grad_a(d_out, x1, x2)
    d_x2 = matmul_grad_b(d_out, x1, x2)


@adjoint(operator.matmul, bilinear=True, examples=tuple({"a": e["x1"], "b": e["x2"]} for e in _PRODUCTS))
def matmul_operator(out, a, b, d_out):
    d_a = matmul_grad_a(d_out, a, b)
    d_b = matmul_grad_b(d_out, a, b)


@adjoint(np.dot, bilinear=True, method="dot", examples=tuple({"a": e["x1"], "b": e["x2"]} for e in _PRODUCTS[:4])
         + ({"a": (), "b": (3,)},))
def dot(out, a, b, d_out):
    d_a = matmul_grad_a(d_out, a, b)
    d_b = matmul_grad_b(d_out, a, b)


@adjoint(np.outer, bilinear=True, examples=({"a": (3,), "b": (4,)}, {"a": (2, 2), "b": (3,)}))
def outer(out, a, b, d_out):
    d_a = np.reshape(np.dot(d_out, np.ravel(b)), np.shape(a))
    d_b = np.reshape(np.dot(np.ravel(a), d_out), np.shape(b))


@adjoint(np.transpose, linear=True, method="transpose", pack_method_args=True, attribute="T",
         examples=({"a": (3, 4)}, {"a": (2, 3, 4), "axes": (1, 2, 0)}, {"a": (5,)}))
def transpose(out, a, axes=None, *, d_out):
    d_a = np.transpose(d_out, inverse_axes(axes))


@adjoint(np.trace, linear=True, method="trace", examples=({"a": (3, 3)}, {"a": (3, 4), "offset": 1}))
def trace(out, a, offset=0, *, d_out):
    d_a = d_out * np.eye(np.shape(a)[0], np.shape(a)[1], k=offset)

fresh_arrays(np.outer)  # products are computed into new arrays (or numbers: 1-d by 1-d)
fresh_values(np.matmul, operator.matmul, np.dot)
