"""nodes.all_nodes lists what gast.walk yields, in the same order, whichever gast is installed."""
from pathlib import Path

import gast
import pytest

import s2s_ad
from s2s_ad.core.nodes import all_nodes

_SOURCES = sorted((Path(__file__).resolve().parents[1] / "corpora").glob("*_functions.py")) + sorted(Path(s2s_ad.__file__).parent.glob("*/*.py"))


@pytest.mark.parametrize("path", _SOURCES, ids=lambda p: p.name)
def test_all_nodes_is_gast_walk(path):
    tree = gast.parse(path.read_text())
    walked = list(gast.walk(tree))
    listed = all_nodes(tree)
    assert len(listed) == len(walked) and all(a is b for a, b in zip(listed, walked))
