"""The disk cache of ``backend="numba"`` is used only where no one else can write (issue #36).

Numba loads pickled machine code from the cache directory, so a directory another user owns, or
that others may write to, is not used: a ``CacheDirectoryWarning`` naming it, once, and the code is
compiled in memory.  Oracles: central differences and the Python backend (the numbers must not
change with where, or whether, the code is cached); the files written, or not, in the directory.
"""
from __future__ import annotations

import os
import stat
import warnings

import numpy as np
import pytest

import s2s_ad
from conftest import module_from_source, numeric_grad

numba = pytest.importorskip("numba")

from s2s_ad.targets.numba import cache_safety  # noqa: E402
from s2s_ad import CacheDirectoryWarning  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch):
    monkeypatch.setattr(cache_safety, "_warned", set())


def _function(tmp_path, tag):
    """A function of its own per test (compiled afresh: the in-memory cache has never seen it)."""
    source = f"""
import numpy as np

def loss_{tag}(x, c):
    total = 0.0
    for i in range(x.shape[0]):
        total = total + c * np.sin(x[i]) * x[i]
    return total
"""
    folder = tmp_path / "programs"
    folder.mkdir(exist_ok=True)
    return getattr(module_from_source(folder, f"cache_safety_{tag}_", source), f"loss_{tag}")


def _checked_gradient(fn):
    """The compiled gradient, checked against central differences and the Python backend;
    the warnings the call gave."""
    x = np.array([0.3, -1.2, 2.0, 0.7])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = s2s_ad.grad(fn, backend="numba")(x, 1.5)
    np.testing.assert_allclose(compiled, numeric_grad(fn, (x, 1.5), 0), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(compiled, s2s_ad.grad(fn)(x, 1.5), rtol=1e-13, atol=1e-15)
    assert not [w for w in caught if issubclass(w.category, s2s_ad.CompileFallbackWarning)]
    return [w for w in caught if issubclass(w.category, CacheDirectoryWarning)]


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_missing_cache_directory_is_made_owner_only_and_used(tmp_path, monkeypatch):
    chosen = tmp_path / "made" / "here"
    monkeypatch.setenv("S2S_AD_CACHE_DIR", str(chosen))
    assert _checked_gradient(_function(tmp_path, "missing")) == []
    for folder in (chosen, chosen / "numba", chosen / "numba" / "__pycache__"):
        assert _mode(folder) == 0o700, folder
    assert len(list((chosen / "numba").glob("d_loss_missing_*.py"))) == 1
    assert list((chosen / "numba" / "__pycache__").glob("*.nbi"))  # Numba's index: the disk cache in use


def test_a_directory_others_may_read_but_not_write_is_used(tmp_path, monkeypatch):
    chosen = tmp_path / "readable"
    chosen.mkdir()
    chosen.chmod(0o755)
    monkeypatch.setenv("S2S_AD_CACHE_DIR", str(chosen))
    assert _checked_gradient(_function(tmp_path, "readable")) == []
    assert _mode(chosen) == 0o755  # (the user's own directory is left as it is)
    assert len(list((chosen / "numba").glob("d_loss_readable_*.py"))) == 1


@pytest.mark.parametrize("where", ["given", "numba", "pycache"])
def test_a_directory_anyone_may_write_is_not_used_and_warned_of_once(tmp_path, monkeypatch, where):
    chosen = tmp_path / "shared"
    chosen.mkdir()
    open_one = {"given": chosen, "numba": chosen / "numba", "pycache": chosen / "numba" / "__pycache__"}[where]
    open_one.mkdir(parents=True, exist_ok=True)
    open_one.chmod(0o777)
    monkeypatch.setenv("S2S_AD_CACHE_DIR", str(chosen))
    warned = _checked_gradient(_function(tmp_path, f"open_{where}"))
    assert len(warned) == 1
    message = str(warned[0].message)
    assert str(open_one) in message and "0777" in message and "S2S_AD_CACHE_DIR" in message
    assert "chmod 700" in message and "in memory" in message
    assert warned[0].filename == __file__  # (said at the user's call, not inside s2s_ad)
    assert not list(chosen.rglob("*.py")) and not list(chosen.rglob("*.nbi")) and not list(chosen.rglob("*.nbc"))
    assert _checked_gradient(_function(tmp_path, f"open_{where}_again")) == []  # once per directory
    assert not list(chosen.rglob("*.nb*"))


def test_a_group_writable_directory_is_not_used(tmp_path, monkeypatch):
    chosen = tmp_path / "group"
    chosen.mkdir()
    chosen.chmod(0o770)
    monkeypatch.setenv("S2S_AD_CACHE_DIR", str(chosen))
    warned = _checked_gradient(_function(tmp_path, "group"))
    assert len(warned) == 1 and "0770" in str(warned[0].message)
    assert not (chosen / "numba").exists()


def test_a_directory_another_user_owns_is_not_used(tmp_path, monkeypatch):
    chosen = tmp_path / "theirs"
    chosen.mkdir()
    chosen.chmod(0o700)
    monkeypatch.setenv("S2S_AD_CACHE_DIR", str(chosen))
    real = os.getuid()
    monkeypatch.setattr(cache_safety.os, "getuid", lambda: real + 1)  # (as if the files were another's)
    warned = _checked_gradient(_function(tmp_path, "theirs"))
    assert len(warned) == 1
    assert "owned by another user" in str(warned[0].message) and str(chosen) in str(warned[0].message)
    assert not (chosen / "numba").exists()


def test_numbas_own_cache_directory_is_checked_too(tmp_path, monkeypatch):
    chosen, numbas = tmp_path / "mine", tmp_path / "numbas"
    numbas.mkdir()
    numbas.chmod(0o777)
    monkeypatch.setenv("S2S_AD_CACHE_DIR", str(chosen))
    monkeypatch.setattr(numba.core.config, "CACHE_DIR", str(numbas))
    warned = _checked_gradient(_function(tmp_path, "numbas"))
    assert len(warned) == 1 and str(numbas) in str(warned[0].message)
    assert not list(numbas.rglob("*.nb*")) and not list(chosen.rglob("*.py"))


def test_a_cache_directory_that_cannot_be_made_compiles_in_memory_without_a_warning(tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("S2S_AD_CACHE_DIR", str(blocker / "below"))
    assert _checked_gradient(_function(tmp_path, "unmade")) == []
    assert blocker.read_text() == "not a directory"
