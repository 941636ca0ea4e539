"""DREAM's and ESCHER's value function on Leduc: how far the learned history values are from the exact
ones at the profile they were learned at, and what that costs ESCHER's regrets and the exploitability
(issue 22; docs/neural.md, "The value function: what helped DREAM, and why ESCHER still falls short").

Runs one solver on the tuning seed for `iterations` iterations and, at iterations 2, 4, 8, ..., prints:
the share of all histories the value memory holds examples of (nan without a memory), the value RMSE
against `history_values` over the non-terminal histories and over all histories (beside the spread of
the exact values), the error of ESCHER's expected regret samples read off those values relative to the
size of the exact ones (what the value error costs the regrets), nodes touched, CPU seconds and exact
exploitability. ``--exact`` replaces the learned values by the exact ones (an oracle: what ESCHER or
DREAM reach with a perfect value function; the rollouts still run and are counted).

    OMP_NUM_THREADS=1 python -m benchmarks.studies.neural_value_diagnostic escher \\
        '{"traversals": 200, "value_traversals": 200, "regressor": {"name": "best_first", "max_leaves": 512}}' 32
"""

from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from rcfr import evaluate, load_game, make_solver  # noqa: E402
from rcfr.solvers.neural import history_values  # noqa: E402


def walk_reach(game, sigma: np.ndarray, traverser: int) -> np.ndarray:
    """Probability that ESCHER's walk for `traverser` (uniform for the traverser, sigma for the opponent,
    chance's probabilities) reaches each history."""
    reach = np.zeros(game.num_histories)
    reach[0] = 1.0
    for d in range(1, int(game.depth.max()) + 1):
        level = np.flatnonzero(game.depth == d)
        parent = game.parent[level]
        mover = game.player[parent]
        own = sigma[game.infoset_first_seq[np.maximum(game.infoset[parent], 0)] + game.action[level]]
        prob = np.where(mover == -1, game.chance_prob[level],
                        np.where(mover == traverser, 1.0 / game.num_children[parent], own))
        reach[level] = reach[parent] * prob
    return reach


def expected_regrets(game, sigma: np.ndarray, values: np.ndarray, traverser: int) -> np.ndarray:
    """The expected per-traversal sum of ESCHER's samples for each of the traverser's sequences, read off
    the value table `values` (with the exact values: the counterfactual regrets times pi_u)."""
    reach = walk_reach(game, sigma, traverser)
    out = np.zeros(game.num_sequences)
    for h in np.flatnonzero(game.player == traverser):
        c, n = game.first_child[h], game.num_children[h]
        f = game.infoset_first_seq[game.infoset[h]]
        children = values[c:c + n]
        out[f:f + n] += reach[h] * (children - sigma[f:f + n] @ children)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("solver", choices=["dream", "escher"])
    parser.add_argument("options", help="solver options as JSON")
    parser.add_argument("iterations", type=int)
    parser.add_argument("--game", default="leduc")
    parser.add_argument("--seed", type=int, default=100)
    parser.add_argument("--exact", action="store_true", help="exact values in place of the learned ones")
    args = parser.parse_args()
    game = load_game(args.game)
    solver = make_solver(args.solver, game, seed=args.seed, **{"features": "poker", **json.loads(args.options)})
    learned = solver._learn_values
    last = {}

    def watched(sigma, p, t):
        values = learned(sigma, p, t)
        last["exact"], last["sigma"] = history_values(game, sigma), np.array(sigma)
        return last["exact"].copy() if args.exact else values

    solver._learn_values = watched
    inner = ~(game.player == -2)
    cpu, mark = 0.0, 2
    while solver.iteration < args.iterations:
        start = time.process_time()
        solver.iterate()
        cpu += time.process_time() - start
        if solver.iteration == mark or solver.iteration == args.iterations:
            mark *= 2
            err = solver.values - last["exact"]
            sigma = last["sigma"]  # the profile the values were learned at
            regret = [(expected_regrets(game, sigma, solver.values, p), expected_regrets(game, sigma, last["exact"], p))
                      for p in (0, 1)]
            relative = np.sqrt(sum(np.sum((a - b) ** 2) for a, b in regret) / sum(np.sum(b ** 2) for _, b in regret))
            covered = (np.mean(np.isin(np.arange(game.num_histories), solver.value_memory.examples()[0]))
                       if solver.value_memory is not None else float("nan"))
            print(f"it {solver.iteration} nodes {solver.nodes_touched:.3g} cpu {cpu:.1f} | histories in the value "
                  f"memory {covered:.2f} | value RMSE non-terminal {np.sqrt(np.mean(err[inner] ** 2)):.3f} all "
                  f"{np.sqrt(np.mean(err ** 2)):.3f} (std of exact values {last['exact'][inner].std():.3f}) | "
                  f"ESCHER regret error / regret size {relative:.2f} | "
                  f"{evaluate(game, solver.average_policy()).exploitability_mbb:.1f} mbb/g", flush=True)


if __name__ == "__main__":
    main()
