"""Linear and discounted MCCFR against plain MCCFR at equal nodes touched (issue 37, item 4).

    python -m benchmarks.studies.discounted_mccfr [--games leduc,goofspiel5] [--sampler es-mccfr] [--nodes 3e7]
                                          [--seeds 3]

Each arm runs with `--seeds` seeds until it has touched `--nodes` histories, evaluated exactly at
log-spaced node counts; the table gives the mean exploitability (chips) and its standard deviation over
the seeds at each count. Arms: plain (uniform averaging), linear (alpha 1, linear averaging: Linear CFR's
weights on sampled regrets) and discounted (alpha 1.5, averaging 2: DCFR's schedule with beta = alpha),
each with regret matching and with regret-matching+.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import rcfr
from rcfr.solvers import make_solver

GAMES = {"leduc": ("leduc", {}), "goofspiel5": ("goofspiel", {"cards": 5, "returns": "win_loss",
                                                               "points_order": "descending"})}
ARMS = {"plain": {}, "linear": {"alpha": 1.0, "averaging": "linear"},
        "discounted": {"alpha": 1.5, "averaging": 2.0}}


def run(game, sampler: str, options: dict, seed: int, marks: list[int]) -> list[float]:
    solver = make_solver(sampler, game, seed=seed, **options)
    values = []
    for mark in marks:
        while solver.nodes_touched < mark:  # iterations for the nodes left, at the mean nodes per iteration
            per = solver.nodes_touched / solver.iteration if solver.iteration else None
            solver.run(100 if per is None else max(1, int((mark - solver.nodes_touched) / per)))
        values.append(rcfr.exploitability(game, solver.average_policy()))
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", default="leduc,goofspiel5")
    parser.add_argument("--sampler", default="es-mccfr")
    parser.add_argument("--nodes", type=float, default=3e7)
    parser.add_argument("--points", type=int, default=4)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    marks = [int(m) for m in np.geomspace(args.nodes / 10 ** (args.points - 1), args.nodes, args.points)]
    print("| game | arm | regret matching | " + " | ".join(f"{m:.0e} nodes" for m in marks) + " | seconds |")
    print("|---|---|---|" + "---|" * (len(marks) + 1))
    for label in args.games.split(","):
        name, params = GAMES[label]
        game = rcfr.load_game(name, **params)
        for arm, options in ARMS.items():
            for matching in ("rm", "rm+"):
                start = time.process_time()
                values = np.array([run(game, args.sampler, {**options, "regret_matching": matching}, seed, marks)
                                   for seed in range(args.seeds)])
                cells = [f"{m:.3g} ± {s:.2g}" for m, s in zip(values.mean(0), values.std(0))]
                print(f"| {label} | {arm} | {matching} | " + " | ".join(cells) +
                      f" | {time.process_time() - start:.0f} |", flush=True)


if __name__ == "__main__":
    main()
