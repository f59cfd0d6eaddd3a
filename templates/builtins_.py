"""Rules for Python builtins: ``abs``, ``min``/``max`` of two values, ``float``; and what may be
called for its effect alone: ``print``, ``warnings.warn`` and logging (``reports=True``)."""
import builtins
import logging
import warnings

import numpy as np

from s2s_ad.rules import adjoint, declare, nondifferentiable

nondifferentiable(int, round, bool, len, range, isinstance, slice)
# A range made inside a loop (an inner loop's range(3), range(i)) is made again in the reverse sweep from
# its numbers, not recorded on the tape at each trip of the outer loop.
declare(range, cheap=True)
nondifferentiable(str, repr, format)  # a message's text (", ".join(str(v) for v in xs)): a string has no derivative
# Calls refused outright, with what to write instead.
declare(eval, refused="code built at run time cannot be transformed; write the expression out")
declare(exec, refused="code built at run time cannot be transformed; write the statements out")
# (print as a statement of its own runs for its effect, kept where the primal computation runs; a print in an
# expression, where its result None is computed with, is refused: nothing would keep it from being dropped)
declare(print, refused="print runs in a differentiated function only as a statement of its own (print(v)), "
                       "which is kept where the function's values are computed; its result, None, is not a "
                       "value to compute with: print on a line of its own (in a loop, for a generator's items)")
declare(open, refused="a differentiated function must be pure; read files outside it and pass the data in")
declare(np.load, np.loadtxt, np.genfromtxt,
        refused="a differentiated function must be pure; read files outside it and pass the data in")
declare(np.save, np.savetxt, np.savez,
        refused="a differentiated function must be pure; write files outside it, from its result")
declare(input, refused="a differentiated function must be pure; ask outside it and pass the answer in")
declare(setattr, refused="a differentiated function must not mutate objects; return the new value instead")
declare(globals, refused="pass what you need as arguments")
declare(locals, refused="name the values you need")


@adjoint(abs, elementwise=True, domain=(-0.8, 0.8), arithmetic=True)
def abs(out, x, d_out):
    d_x = d_out * (1.0 - 2.0 * (x < 0))  # +1 at the kink x = 0, as JAX


@adjoint(max, elementwise=True, returns_operand=True, variadic=np.max)
def max(out, a, b, d_out):
    first = (a > b) + 0.5 * (a == b)  # a tie splits the adjoint evenly, as JAX does
    d_a = d_out * first
    d_b = d_out * (1.0 - first)


@adjoint(min, elementwise=True, returns_operand=True, variadic=np.min)
def min(out, a, b, d_out):
    first = (a < b) + 0.5 * (a == b)
    d_a = d_out * first
    d_b = d_out * (1.0 - first)


@adjoint(float, elementwise=True, arithmetic=True)
def float(out, x, d_out):
    d_x = d_out


# Facts about operations with no rule here (see s2s_ad.rules.FACTS).
declare(len, int, bool, counts=True)
declare(len, axis_length=0)  # len(x) is x.shape[0]
declare(len, sum, sorted, tuple, list, holds_no_list=True)  # (a number, or a new tuple or list of the items)
declare(bool, isinstance, compares=True)  # truth values
declare(int, arithmetic=True)
# Pure on values known while transforming: folded on constants, and callable by a sort key decided then
declare(*[getattr(builtins, name) for name in ("len", "str", "abs", "int", "float", "min", "max", "tuple", "round",
                                               "repr", "bool")], foldable=True)

# What only reports, and so may run for its effect in a differentiated function (print(x), LOG.info(...)).
_LOGGING = ("debug", "info", "warning", "error", "critical", "exception", "log")
declare(print, warnings.warn, *[getattr(logging, name) for name in _LOGGING], reports=True)
declare(*[vars(cls)[name] for cls in (logging.Logger, logging.LoggerAdapter) for name in _LOGGING], reports=True)
