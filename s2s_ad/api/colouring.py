"""Colouring a sparsity pattern, so a sparse Jacobian or Hessian takes one pass per colour.

Input: a pattern, a SciPy sparse boolean matrix (rows: outputs, columns: inputs).  Output: one
colour (0, 1, ...) per column or row.  Columns of one colour share no row (a distance-2 colouring
of the bipartite graph, that is a colouring of the column intersection graph), so one forward pass
whose seed is the sum of a colour's unit vectors gives each of their entries alone in its row:
direct recovery.  Rows likewise for reverse mode.  A Hessian's symmetric pattern is also given a
star colouring (a distance-1 colouring in which every path of four vertices has three colours:
Gebremedhin, Manne and Pothen, "What color is your Jacobian?", SIAM Review 2005, the greedy of
their section 4), whose entries are each read directly from the product of their column's colour
in their row, or from the mirrored entry's (symmetric direct recovery).  The star colouring is
kept where ``symmetric_reads`` confirms that every entry can be read so and it takes fewer colours
than the distance-2 colouring (an arrow pattern: 2 colours where distance-2 needs one per column).

The greedy colouring is tried in a few vertex orders (largest first, natural, smallest last) and
the one with fewest colours is kept.  SciPy offers no public colouring (``scipy.optimize``'s
``group_columns`` is private) and networkx, which has greedy colourings, is no dependency of
s2s_ad; the greedy below is a few lines over SciPy's sparse matrices.
"""
from __future__ import annotations

from typing import Any, Optional

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


def colour_counts(structure: Any, colors: np.ndarray) -> np.ndarray:
    """(rows by colours): how many entries of each row of ``structure`` have each colour (their column's)."""
    count = int(colors.max(initial=-1)) + 1
    n = structure.shape[1]
    one_hot = type(structure)((np.ones(n, dtype=np.int64), (np.arange(n), colors)), shape=(n, count))
    return np.asarray((structure.astype(np.int64) @ one_hot).toarray())


def direct_reads(structure: Any, colors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each entry of ``structure`` (CSR, in order): the row and the colour of the product it is read
    from, where no two columns of one colour share a row."""
    rows = np.repeat(np.arange(structure.shape[0]), np.diff(structure.indptr))
    return rows, colors[structure.indices]


def symmetric_reads(structure: Any, colors: np.ndarray) -> Optional[tuple[np.ndarray, np.ndarray]]:
    """As ``direct_reads`` for a symmetric pattern: entry (i, j) is read at row i of colour(j)'s
    product where j is the only column of its colour in row i, else at row j of colour(i)'s (the
    mirrored entry, equal); None where some entry can be read neither way."""
    counts = colour_counts(structure, colors)
    i = np.repeat(np.arange(structure.shape[0]), np.diff(structure.indptr))
    j = structure.indices
    alone, mirrored = counts[i, colors[j]] == 1, counts[j, colors[i]] == 1
    if not np.all(alone | mirrored):
        return None
    return np.where(alone, i, j), np.where(alone, colors[j], colors[i])


def star_colors(pattern: Any) -> np.ndarray:
    """A greedy star colouring of the graph of a symmetric pattern, largest degree first."""
    graph = _without_diagonal(pattern.tocsr().astype(np.int64))
    indptr, indices = graph.indptr, graph.indices
    colors = np.full(graph.shape[0], -1, dtype=np.intp)
    for v in np.argsort(-np.diff(indptr), kind="stable"):
        neighbours = indices[indptr[v]:indptr[v + 1]]
        forbidden: set[int] = set()
        for w in neighbours:
            cw = int(colors[w])
            if cw >= 0:
                forbidden.add(cw)
            for x in indices[indptr[w]:indptr[w + 1]]:
                cx = int(colors[x])
                if x == v or cx < 0:
                    continue
                if cw < 0:  # v and x would be two ends of a path through w: distinct
                    forbidden.add(cx)
                elif np.count_nonzero(colors[indices[indptr[x]:indptr[x + 1]]] == cw) >= 2:
                    forbidden.add(cx)  # v-w-x-y with colour(y) = colour(w): v may not take colour(x)
        coloured = neighbours[colors[neighbours] >= 0]
        shades, times = np.unique(colors[coloured], return_counts=True)
        for shade in shades[times >= 2]:  # w-v-x-y with colour(w) = colour(x): v may not take colour(y)
            for x in coloured[colors[coloured] == shade]:
                around = indices[indptr[x]:indptr[x + 1]]
                forbidden.update(int(c) for c in colors[around[(around != v) & (colors[around] >= 0)]])
        colour = 0
        while colour in forbidden:
            colour += 1
        colors[v] = colour
    return colors


def direct_recovery(pattern: Any, colors: np.ndarray) -> bool:
    """Whether no two columns of one colour share a row of ``pattern`` (each entry is recovered alone)."""
    structure = pattern.tocsr()
    for i in range(structure.shape[0]):
        seen = colors[structure.indices[structure.indptr[i]:structure.indptr[i + 1]]]
        if np.unique(seen).size != seen.size:
            return False
    return True
