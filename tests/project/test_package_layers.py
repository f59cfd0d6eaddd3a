"""The engine's packages are its stages, in order: a module imports only its own package and the
packages before its own in ``LAYERS`` (docs/design.md, "The stages"), so no stage reaches up into
a later one and no two packages import each other."""
from __future__ import annotations

import ast
from pathlib import Path

import s2s_ad

PACKAGE = Path(s2s_ad.__file__).parent
LAYERS = ["core", "rules", "frontend", "memory", "lowering", "analysis", "passes", "ad", "targets", "driver", "api"]


def _package_imports(module: Path, depth: int = 1) -> set[str]:
    """The packages of s2s_ad that ``module`` imports (``from ..core import ir``: core), for a module
    ``depth`` packages below s2s_ad (1: a stage's own module; 2: one of a stage's sub-package, whose
    ``from ...core import ir`` is core and ``from .. import x`` its own stage)."""
    found = set()
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == depth + 1:
            if node.module is None:
                found |= {alias.name for alias in node.names}
            else:
                found.add(node.module.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level > depth + 1:
            found.add("above s2s_ad")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("s2s_ad"):
            found.add(f"absolute import of {node.module}")
    return found


def test_the_top_level_holds_the_stages_alone():
    assert sorted(p.name for p in PACKAGE.glob("*.py")) == ["__init__.py", "__main__.py"]
    packages = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())
    assert packages == sorted(LAYERS + ["templates"]) or packages == sorted(LAYERS)


def test_each_package_imports_only_the_packages_before_it():
    wrong = []
    for layer, name in enumerate(LAYERS):
        for module in sorted((PACKAGE / name).rglob("*.py")):  # (its sub-packages' modules too)
            where = module.relative_to(PACKAGE)
            for imported in _package_imports(module, depth=len(where.parts) - 1):
                if imported not in LAYERS[:layer]:
                    wrong.append(f"{where} imports {imported}")
    assert not wrong, wrong


def test_each_package_says_what_it_takes_and_hands_on():
    for name in LAYERS:
        doc = ast.get_docstring(ast.parse((PACKAGE / name / "__init__.py").read_text()))
        assert doc and len(doc.split()) > 20, name


def test_the_layers_test_would_see_an_upward_import(tmp_path):
    upward = tmp_path / "m.py"
    upward.write_text("from ..api import transforms\nfrom . import sibling\n")
    assert _package_imports(upward) == {"api"}
    nested = tmp_path / "n.py"  # (a module of a stage's sub-package: targets/numba/n.py)
    nested.write_text("from ...api import transforms\nfrom .. import target\nfrom . import sibling\n"
                      "from .... import above\n")
    assert _package_imports(nested, depth=2) == {"api", "above s2s_ad"}


MOST_LINES = 800


def test_no_module_of_the_engine_is_over_most_lines():
    """Every module of s2s_ad is at most ``MOST_LINES`` lines: past that a module holds several jobs,
    and is split along its seams into modules of one job each (docs/design.md lists them).

    The template modules (``s2s_ad.templates``, installed from templates/) are left out: they are
    catalogues, one rule with its helpers per operation, side by side and independent of each other,
    already one module per family of operations (numpy_linalg.py); they grow with the operations
    taught, not with what the engine does, and a reader looks an operation up in them rather than
    reading them through."""
    modules = [m for m in sorted(PACKAGE.rglob("*.py")) if m.relative_to(PACKAGE).parts[0] != "templates"]
    assert len(modules) > 80, modules  # (the engine's modules were found)
    long = [f"{m.relative_to(PACKAGE)}: {n} lines" for m in modules
            if (n := len(m.read_text(encoding="utf-8").splitlines())) > MOST_LINES]
    assert not long, long


def _module_imports() -> dict[str, set[str]]:
    """Each module of s2s_ad (by its dotted name) and the modules of s2s_ad it imports, those imported
    for annotations alone (under ``TYPE_CHECKING``) too: ``from .x import y`` is x (y where y is a
    module of x's package), ``from . import y`` is y."""
    names = {".".join(m.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__"): m
             for m in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        found = graph[name] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or node.level == 0:
                continue
            base = package[:len(package) - (node.level - 1)] + (node.module.split(".") if node.module else [])
            for alias in node.names:
                whole = ".".join(base + [alias.name])
                found.add(whole if whole in names else ".".join(base))
        found &= set(names)
        found.discard(name)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_modules_import_each_other_even_for_annotations():
    """No circle of imports between the engine's modules, not even one closed by an import made for
    annotations alone: a part of a class types the object it is given by a Protocol of what it reads
    (api/derivative.py), not by the class whose module imports it."""
    graph = _module_imports()
    assert len(graph) > 80 and graph["s2s_ad.api.gradient"] >= {"s2s_ad.api.built_code", "s2s_ad.api.derivative"}
    assert _cycles(graph) == []


def test_the_circle_test_would_see_a_circle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_package_folder_is_installed():
    """pyproject.toml lists the packages a wheel holds: a folder missing there is missing from an install
    (an editable one finds it anyway, so only a clean install would fail)."""
    from conftest import ROOT
    root = ROOT / "s2s_ad"  # (the repository's folders, whatever is installed)
    text = (ROOT / "pyproject.toml").read_text()
    listed = text.split("packages = [", 1)[1].split("]", 1)[0]
    names = {"s2s_ad." + ".".join(p.parent.relative_to(root).parts) for p in root.rglob("__init__.py")
             if p.parent != root}
    missing = sorted(n for n in names if f'"{n}"' not in listed)
    assert not missing, f"pyproject.toml's packages lack {missing}"
