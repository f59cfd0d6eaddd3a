"""A new operation of a library outside s2s_ad, whose source s2s_ad cannot read (made by exec,
as if compiled): ``smooth_max(a, b) = log(e^a + e^b)``.  ``blend_rules.py`` beside this file
teaches it to s2s_ad; tests/analysis/test_engine_tables.py loads it both ways a user can."""
import numpy as np

_made: dict = {"np": np}
exec("def smooth_max(a, b):\n"
     "    return np.logaddexp(a, b)\n", _made)
smooth_max = _made["smooth_max"]
