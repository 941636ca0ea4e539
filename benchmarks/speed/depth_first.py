"""Depth-first history numbering (docs/large_games.md's proposal), measured without touching the compiler:
renumber one compiled game's history arrays in depth-first order, a history's children numbered
together when the walk reaches it (siblings stay contiguous, as `first_child` / `num_children`
require), check that external sampling computes the same policy on both layouts, and time it.

    python -m benchmarks.speed.depth_first [--game goofspiel --param cards=6] [--iterations 20000] [--repeats 3]

Breadth-first (the compiler's order) puts a history's children a whole level away from it; depth-first
with contiguous siblings keeps a sampled trajectory's histories within a few cache lines of each other.
Prints nodes touched per second (CPU time, best of `repeats`) for each layout, same seed, same samples.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numba
import numpy as np

import rcfr
from rcfr.solvers import make_solver
from rcfr.tree.model import _HISTORY_ARRAYS


@numba.njit(cache=True)
def _depth_first_ids(first_child, num_children):
    """new[old]: the root is 0; when a history is visited (depth first, children in order), its children
    get the next consecutive ids."""
    n = first_child.shape[0]
    new = np.full(n, -1, np.int64)
    new[0] = 0
    nxt = 1
    stack = np.empty(n, np.int64)
    top = 0
    stack[top] = 0
    top += 1
    while top > 0:
        top -= 1
        h = stack[top]
        c0, k = first_child[h], num_children[h]
        for j in range(k):
            new[c0 + j] = nxt
            nxt += 1
        for j in range(k - 1, -1, -1):  # visit the first child first
            stack[top] = c0 + j
            top += 1
    return new


def renumber(game):
    new = _depth_first_ids(game.first_child, game.num_children)
    order = np.argsort(new)  # old id at each new position
    arrays = {}
    for name in _HISTORY_ARRAYS:
        values = getattr(game, name)[order]
        if name in ("parent", "first_child"):
            values = np.where(values >= 0, new[np.maximum(values, 0)], values).astype(values.dtype)
        arrays[name] = values
    leaves = game.num_children[order] == 0
    arrays["first_child"] = np.where(leaves, 0, arrays["first_child"]).astype(game.first_child.dtype)
    fields = {f.name: getattr(game, f.name) for f in dataclasses.fields(game)}
    fields.update(arrays)
    fields["infoset_history"] = new[game.infoset_history].astype(game.infoset_history.dtype)
    return type(game)(**fields)


def rate(game, iterations: int, repeats: int) -> float:
    best = 0.0
    for _ in range(repeats):
        solver = make_solver("es-mccfr", game, seed=0)
        solver.run(max(1, iterations // 100))  # compile and warm up
        nodes, start = solver.nodes_touched, time.process_time()
        solver.run(iterations)
        best = max(best, (solver.nodes_touched - nodes) / (time.process_time() - start))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="goofspiel")
    parser.add_argument("--param", action="append", default=None, help="game parameter k=v (default cards=6)")
    parser.add_argument("--iterations", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    pairs = args.param if args.param is not None else (["cards=6"] if args.game == "goofspiel" else [])
    params = {k: int(v) if v.isdigit() else v for k, v in (p.split("=", 1) for p in pairs)}
    game = rcfr.load_game(args.game, **params)
    start = time.perf_counter()
    deep = renumber(game)
    print(f"{game!r}: renumbered in {time.perf_counter() - start:.1f} s")
    same = [make_solver("es-mccfr", g, seed=0).run(200).average_policy().probs for g in (game, deep)]
    assert np.array_equal(same[0], same[1]), "the renumbered game computes a different policy"
    print("| layout | ES nodes touched per CPU second |")
    print("|---|---|")
    for label, g in (("breadth-first (compiler)", game), ("depth-first, siblings contiguous", deep)):
        print(f"| {label} | {rate(g, args.iterations, args.repeats) / 1e6:.2f} M |", flush=True)


if __name__ == "__main__":
    main()
