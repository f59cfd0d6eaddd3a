"""Whether the disk cache of compiled code may be used: Numba loads pickled machine code from it.

Input: the cache directory (``target.cache_directory()``: ``S2S_AD_CACHE_DIR``'s ``numba`` folder,
else the user's cache).  Output: ``safe_directory(path)``, True where compiled code may be read
from and written to it; the directories it makes, it makes owner-only (0700).

Numba's cache holds pickles (the index and the machine code of each function), loaded at the first
call of a function in a later process: whoever can write into the directory can make that load run
code of theirs as the user.  So a directory (the cache directory, the folder above it that
``S2S_AD_CACHE_DIR`` names, the ``__pycache__`` Numba writes into, and ``NUMBA_CACHE_DIR`` where it is
set, since Numba then writes there instead) that another user owns, or
that its group or everyone may write to, is not used: the code is compiled in memory instead (the
same numbers, compiled again in each process), and a ``CacheDirectoryWarning`` says so once per
directory, naming it and what to do.  A directory that others may read but not write (0755) is
used: reading leaks no more than the user's source.  Where Python has no ``os.getuid`` (Windows),
permissions are Windows' business and the directory is used as it is.
"""
from __future__ import annotations

import os
import stat
import threading
import warnings
from typing import Callable, Optional

from ...core.errors import CacheDirectoryWarning


_warned: set[str] = set()  # the directories already warned of, in this process
_lock = threading.Lock()


def _unsafe_because(path: str) -> Optional[str]:
    """Why ``path`` (an existing directory) must not hold machine code that will be loaded, or None."""
    try:
        found = os.stat(path)
    except OSError as error:
        return f"it cannot be examined ({error.strerror})"
    if not stat.S_ISDIR(found.st_mode):
        return "it is not a directory"
    if found.st_uid != os.getuid():
        return f"it is owned by another user (uid {found.st_uid}, not {os.getuid()})"
    if found.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"other users can write to it (mode {stat.S_IMODE(found.st_mode):04o})"
    return None


def _made(path: str) -> bool:
    """Make ``path`` owner-only where it is missing (its missing parents too); whether it is there."""
    if not os.path.isdir(path):
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
            os.chmod(path, 0o700)  # (the umask may have taken bits; makedirs' mode is the leaf's alone)
        except OSError:
            return False
    return True


def safe_directory(directory: str, stacklevel: Callable[[], int]) -> bool:
    """Whether compiled code may be cached in ``directory`` (made owner-only where missing), and
    ``__pycache__`` inside it, where Numba writes; else False, warned of once per directory
    (``stacklevel``: what names the user's call, called where the warning is made)."""
    if not hasattr(os, "getuid"):
        return True
    for path in (os.path.dirname(directory), directory, os.path.join(directory, "__pycache__")):
        if not _made(path):
            return False  # (a directory that cannot be made: no disk cache, as before, and nothing to warn of)
        reason = _unsafe_because(path)
        if reason is not None:
            _warn_once(path, reason, stacklevel)
            return False
    from numba.core import config
    numbas = getattr(config, "CACHE_DIR", "")  # (NUMBA_CACHE_DIR: where Numba then writes instead of __pycache__)
    reason = _unsafe_because(numbas) if numbas and os.path.isdir(numbas) else None
    if numbas and reason is not None:
        _warn_once(numbas, reason, stacklevel)
        return False
    return True


def _warn_once(path: str, reason: str, stacklevel: Callable[[], int]) -> None:
    with _lock:
        if path in _warned:
            return
        _warned.add(path)
    warnings.warn(CacheDirectoryWarning(
        f"s2s_ad does not use the disk cache of compiled code in {path}: {reason}, and Numba loads the "
        "pickled machine code it finds there, so another user could run code as you. Compiled code is "
        "kept in memory instead (the same numbers; each process compiles again). To use a disk cache, "
        "set S2S_AD_CACHE_DIR to a directory of your own that only you can write to (chmod 700), or "
        f"remove {path} to let s2s_ad create it owner-only."), stacklevel=stacklevel())
