"""Search throughput per game: Star1 nodes per second (one fixed-depth search from a mid-game state)
and UCT simulations per second (heuristic leaves, and rollouts for solitaire Pig); then, for the
chapter 7 solitaires (Pig, Can't Stop, Dominion), moves per second of the Python protocol, rollouts per second step by step
in Python and compiled, and UCT simulations per second with either rollout.

    python -m benchmarks.speed.search
"""

from __future__ import annotations

import time

import numpy as np

from rcfr.search import MCTS, CantStop, CantStopSolitaire, DominionSolitaire, EinStein, Pig, PigSolitaire, StarSearch


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
    print()
    print("| solitaire | protocol moves/s | rollouts/s, Python | rollouts/s, compiled | UCT simulations/s, Python "
          "rollouts | UCT simulations/s, compiled rollouts |")
    print("|---|---|---|---|---|---|")
    for game, c in ((PigSolitaire(), 100.0), (CantStopSolitaire(), 5500.0), (DominionSolitaire(), 100.0)):
        print(f"| {game.name} | {protocol_moves(game):,.0f} | {rollouts(game, False):,.0f} | {rollouts(game, True):,.0f} "
              f"| {uct(game, c, False):,.0f} | {uct(game, c, True):,.0f} |")


def protocol_moves(game, seconds=1.0):
    """Moves (default policy, then a sampled chance outcome) per second through the Python protocol."""
    rng = np.random.default_rng(0)
    moves, t = 0, time.perf_counter()
    while time.perf_counter() - t < seconds:
        s = game.initial(rng)
        while not game.is_terminal(s):
            s = game.step(s, game.default_policy(s, rng), rng)
            moves += 1
    return moves / (time.perf_counter() - t)


def rollouts(game, compiled, n=2000):
    m = MCTS(game, simulations=1, leaf="rollout", seed=0)
    m.compiled = compiled
    s = game.initial()
    m._leaf(s, None, 0)                      # compile outside the timing
    t = time.perf_counter()
    for _ in range(n):
        m._leaf(s, None, 0)
    return n / (time.perf_counter() - t)


def uct(game, c, compiled, n=3000):
    m = MCTS(game, c=c, simulations=n, leaf="rollout", seed=0)
    m.compiled = compiled
    t = time.perf_counter()
    m.run(game.initial())
    return n / (time.perf_counter() - t)


if __name__ == "__main__":
    main()
