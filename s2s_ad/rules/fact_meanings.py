"""The facts a template module may declare about an operation besides its derivative, and what each means.

Input: none; this is the vocabulary.  Output: ``FACTS``, fact name -> its
meaning, against which ``registry.declare`` checks every declaration (an
unknown name is refused with the list of these).  The engine asks
``registry.fact(fn, name)`` and lists no operation itself, so a NumPy function
is taught to it by a change to templates/ alone.
"""
from __future__ import annotations


FACTS: dict[str, str] = {
    "view": "True: the result may be a view of the first argument (np.reshape, x[i])",
    "may_view": "True: the result may be the argument itself, a view of it or a list holding it (np.asarray); "
                "or a function of the number of positional arguments saying so for a call (np.einsum)",
    "shape_only": "a position (or a tuple of them): the argument there is read for its shape and dtype only "
                  "(runtime.unbroadcast)",
    "axis_length": "an axis: called on one array, the result is that axis's length (len: 0)",
    "zero_derivative": "names of inputs whose d_<name> the rule leaves out because the result is piecewise "
                       "constant in them (a threshold, a truth value): a varied argument there carries no "
                       "derivative.  A varied argument for any other input the rule gives no derivative in "
                       "is refused (np.linalg.pinv: ('rcond', 'rtol'))",
    "kind_of_argument": "True: the result is of its one argument's kind, shape and all (a copy made by the "
                        "argument's own method: an array's is an array, a list's a list)",
    "counts": "True: the result is one number whatever the argument (len, np.size)",
    "shape_from": '"argument": the first argument is the shape of the result (np.zeros); '
                  '"like": the result is shaped like the first argument (np.zeros_like)',
    "rank_from": "a parameter's name: the result has as many dimensions as that argument has items (a tuple "
                 "of lengths), or one for a number (np.reshape: 'shape'), read where it is a display or a constant",
    "shaped_like": "a position: the result has the shape of the argument there, or the call raises "
                   "(runtime.writable_copy: 1; read by index_ranges)",
    "makes_floats": "a count: called with that many positional arguments and no keyword, "
                    "the result is a new array of floats (np.zeros(n): 1, np.linspace(a, b): 2)",
    "reduction": "True: called on one argument alone, the result is one number (np.sum)",
    "result_rank": "a function of the positional arguments' ranks giving the result's rank, or None "
                   "where it cannot tell (np.matmul: the larger of two ranks of at least 2)",
    "result_dims": "a function of the arguments' dims (kinds.Array.dims; () for a number, None where unknown; "
                   "keywords by name) giving the result's, or None where it cannot tell (np.matmul: "
                   "kinds.matmul_dims; it may raise TypeError for keywords it does not take)",
    "returns_sequence": "True: the result may be a tuple or list (np.linalg.eigh, np.split)",
    "arithmetic": "True: on numbers, the result is a number, never a 0-d array (operator.add, abs)",
    "returns_float": "True: on numbers, ints included, the result is a Python float (math.sin, math.fmod)",
    "on_a_number": "a function of one argument giving the function's value on a number (within four ulps of "
                   "NumPy's) as a Python float where the number is a Python float or NumPy's float64 (math's "
                   "speed), and the function's own result elsewhere (np.sin: number_functions.sin_of_number; "
                   "read by passes/number_math.py)",
    "fill_operand": "True: elementwise on arrays: an operand filled to its shape with one value "
                    "(np.full) gives the result the 0-d array of that value (np.asarray) gives where both "
                    "have one shape, in values and dtype (NumPy 1, which typed a 0-d array by its value: "
                    "beside float64 operands; fills.py folds only on NumPy 2) (operator.mul)",
    "joins_sequences": "True: on tuples or lists it joins or repeats them (operator.add, operator.mul)",
    "sequence_helpers": "(adjoint, tangent): the helpers that differentiate it where it may join "
                        "or repeat tuples or lists, deciding at run time; declared with joins_sequences "
                        "(operator.add: (add_adjoint, add_tangent), defined in templates/operators.py)",
    "cheap": "True: on numbers, cheaper to compute again in the reverse sweep than to record",
    "factors": "positions: the result is zero where the argument at any of them is zero (operator.mul: (0, 1))",
    "linear_in": "positions: the result is linear in the argument there, the others held (operator.mul: (0, 1); "
                 "operator.truediv: (0,), the numerator)",
    "sum": '"+": the sum of its two arguments, where a zero one drops out (operator.add); '
           '"-": their difference (operator.sub)',
    "returns_operand": "True: the result may be one of the arguments itself (max, min)",
    "holds_no_list": "True: the result is never a list it is given, nor holds one: a number, an item of it, a "
                     "new list or array (len, sum, sorted, operator.getitem: a list grown later is not seen through "
                     "it, memory/lists.py)",
    "retake": '"always": the result is a view of the first argument whenever that is an array, its geometry '
              'fixed by the other arguments and shapes alone, so called again after a write into the argument it '
              'shows what the first result shows (np.transpose, np.split); "contiguous": the same where the first '
              'argument is C-contiguous (np.reshape: a copy otherwise, checked where the code runs)',
    "write_back": '"reshape": a view changed in place goes back into its base as np.reshape(view, np.shape(base)) '
                  '(np.ravel, np.expand_dims); "transpose": as np.transpose(view) (np.transpose without axes); '
                  '"pieces": item k of the result is base[runtime.split_piece(np.shape(base), name, sections, axis, k)], '
                  'so a write into a piece is a store there (np.split and its family)',
    "shift": 'how the result moves when its arguments are shifted by a constant c or scaled by e**c '
             '(shift_invariance.py): "exp" (np.exp: e**c times), "log" (np.log of e**c times: c more), '
             '"product" and "quotient" (the factors\' scales multiply or divide), "negation", "index" (an element read: (x + c)[i] is x[i] + c); for a reduction '
             'along axes where c is constant, "homogeneous" (np.sum: scaled alike) or "equivariant" '
             '(np.mean, np.max: shifted and scaled alike)',

    "folds": "a function of some of the helper's parameters (named as it names them) giving, for constant "
             "values of those, a template to use instead (a function whose body is return <expression> of "
             "the helper's parameters), or None: expand_reduced(m, 1, True) is m; marked takes_unknown = True, it "
             "is called whatever the arguments, with NOT_CONSTANT for those not constants",
    "foldable": "True: on constant numbers, computed once when the code is generated",
    "total_on_numbers": "True: cannot raise on numbers, so may be moved out of a loop that may not run",
    "total_if_nonzero": "positions: cannot raise on numbers where the arguments at these positions are "
                        "nonzero constants, so may then be moved out of a loop (operator.truediv: (1,))",
    "reusable": "True: pure, so a repeated call in one expression reuses the first one's value",
    "compares": "True: a truth value, kept as one when folded (operator.lt)",
    "refused": "what to write instead: a call of it is refused outright, with these words (print, eval)",
    "refused_arguments": "a function of some of the rule's inputs (its parameters named as the rule names them) "
                         "giving, for constant values of those, None where such a call is differentiated, else why "
                         "not and what to write instead: the call is then refused when it is transformed "
                         "(np.pad: pad_refusal in templates/numpy_shape.py, a padding function as the mode)",
    "words": "(verb, noun): how generated names read a result of it (operator.add: ('plus', 'total'))",
    "syntax": "the ast class of the Python operator that calls it (operator.add: ast.Add, operator.neg: ast.USub, "
              "operator.lt: ast.Lt, operator.contains: ast.In, operator.getitem: ast.Subscript): generated code "
              "writes a call of it with that operator",
    "identity": "(value, positions): where the argument at one of the positions is the number value, the result "
                "is the other argument (operator.mul: (1, (0, 1)), operator.truediv: (1, (1,))): generated "
                "code drops the operation",
    "negating": "(value, positions): where the argument at one of the positions is the number value, the result "
                "is the other argument negated (operator.mul: (-1, (0,))): generated code writes -x",
    "opposite": "the function that gives the same result with its second argument negated (operator.add: "
                "operator.sub): generated code writes a - b for a + -b",
    "involution": "True: applied to its own result, it gives back the argument (operator.neg: --a is a)",
    "odd": "True: odd in its first argument, f(-g, ...) is -f(g, ...) (runtime.unbroadcast): generated code "
           "negates the result, smaller than the argument",
    "makes_complex": "True: it makes complex values (np.fft.fft, np.emath.sqrt): s2s_ad's rules are written for "
                     "real values, so a call of it is refused",
    "python_floats_differ": "True: on Python floats it may raise or give a complex number where NumPy's "
                            "float64 gives inf or NaN, other than by dividing by zero (operator.pow: "
                            "(-8.0) ** (1 / 3) is complex): scalar_cells keeps an adjoint vector whose "
                            "elements reach it an array",
    "zero_divisor_raises": "True: on Python numbers a zero divisor raises ZeroDivisionError where NumPy's "
                           "float64 gives inf or NaN (operator.truediv): primal_cells keeps a vector whose "
                           "elements reach a division the user wrote an array",
    "reports": "True: it only reports (prints, logs, warns), so it may be called for its effect alone, where "
               "the primal computation runs (print, logging.info, a Logger's info method)",
    "only_raises": "True: a check that does nothing but raise (runtime.check_bound, the user's raise): run "
                   "again on the values it saw, it raises where it raised, so a loop whose body the reverse "
                   "sweep runs again (checkpointed, fixed_point) may hold it",
    "variadic": "the function that computes it over the items of one argument; called with more than two "
                "arguments, it is folded over them pairwise (max: np.max, so max(xs) is np.max(xs) and "
                "max(a, b, c) is max(max(a, b), c))",
    "numeric": "True: the result is a number or an array, unless declared returns_sequence (NumPy's functions)",
    "respelled": "a function of a call's positional arguments (constants' values; a marker for each other "
                 "argument, to be given back as it is) returning them as the rule reads them, or None to keep "
                 "them: np.einsum(a, [0, 1], b, [1]) is np.einsum('ab,b', a, b)",
    "index_call": "for an object indexed to build an array (np.r_, np.c_), the function of one argument, the "
                  "list of the items, that gives the same array: obj[a, b] is read as index_call([a, b])",
    "takes_functions": "True: a function passed to it as an argument reaches it as a value, a constant of the "
                       "generated code (scipy.integrate.odeint's dynamics), instead of the call being lowered in "
                       "place; a nested def or lambda passed so must read only its parameters and the module's names",
    "seeded_by": "the keyword of the seed of the random generator it makes (np.random.default_rng: \"seed\"): "
                 "made without one (no argument, or None), it is refused, since each pass of a derivative would "
                 "draw other numbers (draws.py)",
}
