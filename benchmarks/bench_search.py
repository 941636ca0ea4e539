"""Search throughput per game: Star1 nodes per second (one fixed-depth search from a mid-game state)
and UCT simulations per second (heuristic leaves, and rollouts for solitaire Pig).

    python -m benchmarks.bench_search
"""

from __future__ import annotations

import time

import numpy as np

from rcfr.search import MCTS, CantStop, EinStein, Pig, PigSolitaire, StarSearch


def midgame(game, seed=0, moves=10):
    rng = np.random.default_rng(seed)
    s = game.initial(rng)
    for _ in range(moves):
        nxt = game.step(s, game.default_policy(s, rng), rng)
        if game.is_terminal(nxt):
            break
        s = nxt
    return s


def main():
    print("| game | Star1 depth | nodes | nodes/s | UCT simulations/s (leaves) |")
    print("|---|---|---|---|---|")
    for game, depth, leaf in ((Pig(), 5, "evaluate"), (EinStein(), 4, "evaluate"), (CantStop(), 3, "evaluate"),
                              (PigSolitaire(), 4, "rollout")):
        s = midgame(game)
        search = StarSearch(game, pruning="star1", depth=depth)
        t = time.perf_counter()
        search.search(s, depth)
        rate = search.nodes_touched / (time.perf_counter() - t)
        mcts = MCTS(game, simulations=2000, leaf=leaf, c=100.0 if game.num_players == 1 else 50.0)
        t = time.perf_counter()
        mcts.run(s)
        sims = 2000 / (time.perf_counter() - t)
        print(f"| {game.name} | {depth} | {search.nodes_touched} | {rate:,.0f} | {sims:,.0f} ({leaf}) |")


if __name__ == "__main__":
    main()
