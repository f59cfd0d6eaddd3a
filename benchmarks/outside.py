"""Hand-written gradients written outside the project, used beside ours when they are there.

``../shared/bench`` beside the checkout (or the folder ``--outside PATH`` names) holds
``workloads.py``, ``specs.py`` and ``hand_grads.py``: the same seven workloads written
independently, each with a hand-written gradient.  Their primals differ in detail from ours
(building prices its energy, the MLP has biases, rk4's loss differs), so the comparison is
made on their own terms: s2s_ad's gradient of *their* primal against *their* hand gradient,
timed in the same run as ours.  The report then takes, for each workload, the larger of the
two ours/hand ratios, the one against the tighter reference.  Nothing here is needed: CI,
where the folder is absent, reports against the project's own references alone, which are
written to be at least as tight.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import types
from typing import Any, Callable, Optional

import s2s_ad
from benchmarks.check import max_abs_difference

DEFAULT_FOLDER = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                              "shared", "bench")
_FILES = ("workloads", "specs", "hand_grads")


def _load(folder: str, name: str) -> types.ModuleType:
    """``folder/name.py`` as module ``outside_bench_<name>`` (a file, so s2s_ad can read its source)."""
    spec = importlib.util.spec_from_file_location(f"outside_bench_{name}", os.path.join(folder, f"{name}.py"))
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {name}.py from {folder}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _as_tuple(gradient: Any) -> tuple:
    return tuple(gradient) if isinstance(gradient, tuple) else (gradient,)


class OutsideReferences:
    """The outside folder's workloads: for a workload name, the calls to time and how far
    s2s_ad's gradient of the outside primal is from the outside hand gradient."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self._workloads, self._specs, self._hand = (_load(folder, name) for name in _FILES)
        self._errors: dict[str, float] = {}

    def names(self) -> list[str]:
        return list(self._specs.SPECS)

    def calls(self, name: str) -> Optional[dict[str, tuple[Callable[..., Any], tuple]]]:
        """``{"outside hand": ..., "outside ours": ...}`` for ``name`` (None if the folder lacks it).
        s2s_ad's gradient is called once here, so its code is built before the timing."""
        spec = self._specs.SPECS.get(name)
        if spec is None:
            return None
        args = spec["make"]()
        hand = getattr(self._hand, spec["fn"] + "_grad")
        ours = s2s_ad.grad(getattr(self._workloads, spec["fn"]), wrt=tuple(spec["wrt"]))
        self._errors[name] = max_abs_difference(_as_tuple(ours(*args)), _as_tuple(hand(*args)))
        return {"outside hand": (hand, args), "outside ours": (ours, args)}

    def max_error(self, name: str) -> float:
        """The largest difference between s2s_ad's gradient and the outside hand gradient."""
        return self._errors[name]


def load(folder: Optional[str]) -> tuple[Optional[OutsideReferences], str]:
    """The outside references from ``folder`` (default ``../shared/bench`` beside the checkout),
    or None, with a line saying which were used."""
    chosen = folder or DEFAULT_FOLDER
    if not all(os.path.isfile(os.path.join(chosen, f"{name}.py")) for name in _FILES):
        if folder:
            raise SystemExit(f"--outside {folder}: no workloads.py, specs.py and hand_grads.py there")
        return None, f"references: the project's own (no {chosen} beside the checkout)"
    return OutsideReferences(chosen), (f"references: the project's own and those in {chosen}; ours/hand is "
                                       "taken against the tighter of the two (the larger ratio)")
