"""Cost of one iteration of the predictive and discounted solvers against CFR+ (issue 21's target: <= 1.3x).

    python -m benchmarks.speed.frontier [--games leduc,...] [--iterations 200] [--repeats 5]

Each cell is the minimum over `repeats` timed blocks of `iterations` iterations (after a warm-up block
that also compiles the kernels), timed in process CPU seconds (`time.process_time`), so load from other
processes on a shared machine inflates it as little as possible; solvers are interleaved block by block.
"""

from __future__ import annotations

import argparse
import time

import rcfr
from rcfr.solvers import make_solver

SOLVERS = ["cfr+", "dcfr", "dcfr+", "pcfr+", "pdcfr+", "hs-dcfr", "hs-pcfr+", "sapcfr+", "apcfr+", "apdcfr+"]
GAMES = {"leduc": "leduc", "liars_dice_1x6": "openspiel:liars_dice(numdice=1,dice_sides=6)",
         "goofspiel5": "openspiel:goofspiel(num_cards=5,imp_info=True,points_order=descending)"}


def per_iteration(solvers: dict, iterations: int, repeats: int) -> dict[str, float]:
    best = {}
    for name, solver in solvers.items():
        solver.run(iterations)  # warm-up
        best[name] = float("inf")
    for _ in range(repeats):
        for name, solver in solvers.items():
            start = time.process_time()
            solver.run(iterations)
            best[name] = min(best[name], time.process_time() - start)
    return {name: value / iterations for name, value in best.items()}


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
        times = per_iteration({n: make_solver(n, game) for n in SOLVERS}, args.iterations, args.repeats)
        base = times["cfr+"]
        cells = [f"{times['cfr+'] * 1e3:.3g} ms"] + [f"{times[n] / base:.2f}x" for n in SOLVERS[1:]]
        print(f"| {label} | {game.num_histories:,} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
