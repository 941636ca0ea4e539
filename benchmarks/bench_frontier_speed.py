"""Cost of one iteration of the predictive and discounted solvers against CFR+ (issue 21's target: <= 1.3x).

    python benchmarks/bench_frontier_speed.py [--games leduc,...] [--iterations 200] [--repeats 5]

Each cell is the minimum over `repeats` timed blocks of `iterations` iterations (after a warm-up block
that also compiles the kernels), so load from other processes inflates it as little as possible.
"""

from __future__ import annotations

import argparse
import time

import rcfr
from rcfr.solvers import make_solver

SOLVERS = ["cfr+", "dcfr", "dcfr+", "pcfr+", "pdcfr+", "hs-dcfr", "hs-pcfr+"]
GAMES = {"leduc": "leduc", "liars_dice_1x6": "openspiel:liars_dice(numdice=1,dice_sides=6)",
         "goofspiel5": "openspiel:goofspiel(num_cards=5,imp_info=True,points_order=descending)"}


def per_iteration(solver, iterations: int, repeats: int) -> float:
    solver.run(iterations)  # warm-up
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        solver.run(iterations)
        best = min(best, time.perf_counter() - start)
    return best / iterations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", default=",".join(GAMES))
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print("| game | histories | " + " | ".join(SOLVERS) + " |")
    print("|---|---|" + "---|" * len(SOLVERS))
    for label in args.games.split(","):
        game = rcfr.load_game(GAMES[label])
        times = {n: per_iteration(make_solver(n, game), args.iterations, args.repeats) for n in SOLVERS}
        base = times["cfr+"]
        cells = [f"{times['cfr+'] * 1e3:.3g} ms"] + [f"{times[n] / base:.2f}x" for n in SOLVERS[1:]]
        print(f"| {label} | {game.num_histories:,} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
