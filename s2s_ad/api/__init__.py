"""The public API: ``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``hessian``, ``jacobian``,
``check_grad``, ``source``; and the tools around it (the ``s2s-ad`` command, export, the derivative
explorer and graph, the rule table).

Input: the user's function and call.  Output: derivatives as values, and readable code; every
build goes through ``driver``.
"""
