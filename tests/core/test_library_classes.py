"""A class of an installed package is never read as the user's record, wherever the package was
installed: under this interpreter's library folders, or in a ``site-packages`` folder elsewhere on
the path (``pip install --user``, another environment's packages through a ``.pth`` file).  Read as
the user's, scipy.stats' objects were refused (a property with a setter) where they ran before."""
from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

import s2s_ad
from s2s_ad.core.containers import library_class

PACKAGE = '''
import numpy as np


class Noise:
    """An object of a package: a property with a setter, a method with no rule."""

    def __init__(self):
        self._scale = 0.5

    @property
    def scale(self):
        return self._scale

    @scale.setter
    def scale(self, value):
        self._scale = value

    def draw(self, size):
        return self._scale * np.ones(size)


noise = Noise()
'''


@pytest.fixture
def installed_elsewhere(tmp_path, monkeypatch):
    folder = tmp_path / "lib" / "python3" / "site-packages"
    (folder / "pkg_elsewhere").mkdir(parents=True)
    (folder / "pkg_elsewhere" / "__init__.py").write_text(PACKAGE)
    monkeypatch.syspath_prepend(str(folder))
    module = importlib.import_module("pkg_elsewhere")
    yield module
    sys.modules.pop("pkg_elsewhere", None)


def test_a_package_in_a_site_packages_folder_elsewhere_is_a_library(installed_elsewhere, tmp_path):
    assert library_class(installed_elsewhere.Noise)
    # A name no other test uses: a module of the same name imported earlier in this process would be found first.
    (tmp_path / "users_own_records.py").write_text("class Mine:\n    pass\n")
    sys.path.insert(0, str(tmp_path))
    importlib.invalidate_caches()
    try:
        mine = importlib.import_module("users_own_records")
        assert not library_class(mine.Mine)  # the user's own module, beside their script
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("users_own_records", None)


def test_its_object_is_called_not_read_as_a_record(installed_elsewhere, tmp_path):
    namespace: dict = {"np": np, "pkg_elsewhere": installed_elsewhere}
    source = "def f(x):\n    return np.sum(x * pkg_elsewhere.noise.draw(3))\n"
    path = str(tmp_path / "user_code.py")  # the user's script, outside any package folder
    with open(path, "w") as handle:
        handle.write(source)
    exec(compile(source, path, "exec"), namespace)
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(s2s_ad.grad(namespace["f"])(x), 0.5 * np.ones(3), rtol=1e-15)


CHECKOUT = '''
import numpy as np

from .core import Noise


class Softplus:
    def __init__(self, beta):
        self.beta = beta

    def __call__(self, x):
        return np.log1p(np.exp(self.beta * x)) / self.beta


def smooth_sum(x, beta=2.0):
    return np.sum(Softplus(beta)(x))


noise = Noise()
'''


def test_a_source_checkout_on_the_path_is_read_as_the_users_code(tmp_path):
    # A library's checkout (a pyproject.toml beside the package, no site-packages folder above it), on the
    # path as PYTHONPATH or an editable install puts it: no rule tells it from the user's own project, so
    # it is read as the user's code (docs/containers.md): its source followed, derivatives through it, and
    # what cannot be read refused naming why, as for a class of the user's; never read otherwise.
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "checkout_lib_r7"\n')
    (tmp_path / "checkout_lib_r7").mkdir()
    (tmp_path / "checkout_lib_r7" / "__init__.py").write_text(CHECKOUT)
    (tmp_path / "checkout_lib_r7" / "core.py").write_text(PACKAGE)
    sys.path.insert(0, str(tmp_path))
    importlib.invalidate_caches()
    try:
        lib = importlib.import_module("checkout_lib_r7")
        assert not library_class(lib.Softplus)
        namespace: dict = {"np": np, "lib": lib}
        source = ("def made_inside(x):\n    return np.sum(lib.Softplus(3.0)(x))\n\n\n"
                  "def through_its_function(x):\n    return lib.smooth_sum(x) + lib.smooth_sum(x, 0.5)\n\n\n"
                  "def its_module_object(x):\n    return np.sum(x * lib.noise.draw(3))\n")
        path = str(tmp_path / "user_script_r7.py")
        with open(path, "w") as handle:
            handle.write(source)
        exec(compile(source, path, "exec"), namespace)
        x = np.array([-0.5, 0.25, 1.5])

        def sigmoid(t):
            return 1.0 / (1.0 + np.exp(-t))
        np.testing.assert_allclose(s2s_ad.grad(namespace["made_inside"])(x), sigmoid(3.0 * x), rtol=1e-12)
        np.testing.assert_allclose(s2s_ad.grad(namespace["through_its_function"])(x),
                                   sigmoid(2.0 * x) + sigmoid(0.5 * x), rtol=1e-12)
        with pytest.raises(s2s_ad.TransformError, match="Noise.scale is a property with a setter") as caught:
            s2s_ad.grad(namespace["its_module_object"])(x)  # (installed, the same object is called unread)
        assert caught.value.filename == path and caught.value.line == 10
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("checkout_lib_r7", "checkout_lib_r7.core"):
            sys.modules.pop(name, None)
