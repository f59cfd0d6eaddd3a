"""Colouring a sparsity pattern, so a sparse Jacobian or Hessian takes one pass per colour.

Input: a pattern, a SciPy sparse boolean matrix (rows: outputs, columns: inputs).  Output: one
colour (0, 1, ...) per column or row.  Columns of one colour share no row (a distance-2 colouring
of the bipartite graph, that is a colouring of the column intersection graph), so one forward pass
whose seed is the sum of a colour's unit vectors gives each of their entries alone in its row:
direct recovery.  Rows likewise for reverse mode.  A Hessian's columns are coloured the same way
on its symmetric pattern (direct recovery by columns, not star colouring: star colouring may need
fewer colours, for example on an arrow pattern; on banded patterns the two agree).

The greedy colouring is tried in a few vertex orders (largest first, natural, smallest last) and
the one with fewest colours is kept.  SciPy offers no public colouring (``scipy.optimize``'s
``group_columns`` is private) and networkx, which has greedy colourings, is no dependency of
s2s_ad; the greedy below is a few lines over SciPy's sparse matrices.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def column_colors(pattern: Any) -> np.ndarray:
    """A colour per column of ``pattern`` such that no two columns of one colour share a row."""
    structure = pattern.tocsr().astype(np.int64)
    fewest = int(np.diff(structure.indptr).max(initial=0))  # a row's columns all differ: none can do better
    return _greedy(_without_diagonal((structure.T @ structure).tocsr()), fewest)


def row_colors(pattern: Any) -> np.ndarray:
    """A colour per row of ``pattern`` such that no two rows of one colour share a column."""
    return column_colors(pattern.T)


def _without_diagonal(graph: Any) -> Any:
    graph = graph.tocoo()
    keep = graph.row != graph.col
    graph = type(graph)((graph.data[keep], (graph.row[keep], graph.col[keep])), shape=graph.shape).tocsr()
    graph.eliminate_zeros()
    graph.sort_indices()
    return graph


def _greedy(graph: Any, fewest: int) -> np.ndarray:
    """The fewest colours the greedy colouring of ``graph`` (adjacency, CSR) finds over a few orders,
    stopping at the first that takes ``fewest`` (a lower bound)."""
    degrees = np.diff(graph.indptr)
    orders = [lambda: np.argsort(-degrees, kind="stable"), lambda: np.arange(graph.shape[0]),
              lambda: _smallest_last(graph)]
    best: np.ndarray = np.zeros(0, dtype=np.intp)
    for order in orders:
        colors = _greedy_in_order(graph, order())
        if not best.size or colors.max(initial=-1) < best.max(initial=-1):
            best = colors
        if best.max(initial=-1) + 1 <= fewest:
            break
    return best


def _greedy_in_order(graph: Any, order: np.ndarray) -> np.ndarray:
    """Each vertex in turn takes the smallest colour none of its coloured neighbours has."""
    colors = np.full(graph.shape[0], -1, dtype=np.intp)
    indptr, indices = graph.indptr, graph.indices
    for v in order:
        used = colors[indices[indptr[v]:indptr[v + 1]]]
        used = used[used >= 0]
        if not used.size:
            colors[v] = 0
            continue
        taken = np.zeros(int(used.max()) + 2, dtype=bool)
        taken[used] = True
        colors[v] = int(np.argmin(taken))
    return colors


def _smallest_last(graph: Any) -> np.ndarray:
    """The smallest-last order (Matula and Beck): take out a vertex of least degree among those
    left, again and again, and colour in the reverse of that order."""
    n = graph.shape[0]
    degrees = np.diff(graph.indptr).astype(np.int64)
    left = np.ones(n, dtype=bool)
    removed = []
    buckets: dict[int, set[int]] = {}
    for v in range(n):
        buckets.setdefault(int(degrees[v]), set()).add(v)
    low = 0
    for _ in range(n):
        while not buckets.get(low):
            low += 1
        v = buckets[low].pop()
        left[v] = False
        removed.append(v)
        for w in graph.indices[graph.indptr[v]:graph.indptr[v + 1]]:
            if left[w]:
                d = int(degrees[w])
                buckets[d].discard(int(w))
                degrees[w] = d - 1
                buckets.setdefault(d - 1, set()).add(int(w))
        low = max(low - 1, 0)
    return np.array(removed[::-1], dtype=np.intp)


def direct_recovery(pattern: Any, colors: np.ndarray) -> bool:
    """Whether no two columns of one colour share a row of ``pattern`` (each entry is recovered alone)."""
    structure = pattern.tocsr()
    for i in range(structure.shape[0]):
        seen = colors[structure.indices[structure.indptr[i]:structure.indptr[i + 1]]]
        if np.unique(seen).size != seen.size:
            return False
    return True
