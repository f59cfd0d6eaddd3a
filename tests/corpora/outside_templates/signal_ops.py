"""Operations of a library outside s2s_ad, whose source s2s_ad cannot read (as
if compiled: made by exec), so that a differentiated function calling one is
refused until the rules in ``signal_rules.py`` (beside this file) are loaded.
"""
import numpy as np

_made: dict = {"np": np}
exec("def softplus(x):\n"  # log(1 + e^x)
     "    return np.logaddexp(0.0, x)\n"
     "def reversed_rows(m):\n"  # a view of its argument, as np.flip gives
     "    return m[::-1]\n", _made)
softplus = _made["softplus"]
reversed_rows = _made["reversed_rows"]
