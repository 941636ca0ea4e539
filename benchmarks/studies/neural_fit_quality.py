"""How much of its targets' variance each regressor explains on the Deep CFR family's own fits (docs/neural.md,
"Networks trained enough").

Runs one solver of the family on one game with best-first trees (the preset's arm) and keeps the advantage
fits' inputs (pooled sampled regrets per sequence, with their weights) at the iterations asked. Each
regressor then refits every kept dataset: the weighted R^2 on the rows it was fit to (how much of the
targets' variance it can represent), on a held-out 10% when fit to the other 90% (how well it generalizes
to sequences it did not see), the strategy it plays (regret matching on its predictions for every sequence
of the player) against the one the exact pooled targets give (zero where a sequence has no example): the
mean L1 distance per information set, its epochs where it stops early, and its CPU seconds per fit.

    OMP_NUM_THREADS=1 python -m benchmarks.studies.neural_fit_quality sd-cfr '{"sampler": "external", "traversals": 100}' \\
        25 100 400 --regressor '{"name": "mlp", "hidden": [64, 64], "epochs": 20, "learning_rate": 1e-3, "batch_size": 256, "early_stopping": false}'
"""

from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from rcfr import load_game, make_solver  # noqa: E402
from rcfr.regressors import make_regressor, seeded  # noqa: E402
from rcfr.regressors.base import fit, predict  # noqa: E402
from rcfr.solvers.neural.solver import pooled_targets  # noqa: E402

TREES = {"name": "best_first", "max_leaves": 512}


def captured_fits(solver_name: str, options: dict, game_name: str, iterations: list[int], seed: int):
    """The solver, and (iteration, player, sequences, X, y, w) of every advantage fit at the iterations asked."""
    solver = make_solver(solver_name, load_game(game_name), seed=seed, regressor=TREES, features="poker", **options)
    kept, fitted = [], solver._fit

    def keeping(role, player, t, X, y, w):
        if role == 0 and t in iterations:  # ADVANTAGE
            sequences = pooled_targets(solver.advantages[player], solver.buffer_power, solver.game.num_sequences)[0]
            kept.append((t, player, sequences, np.array(X), np.array(y), np.array(w)))
        return fitted(role, player, t, X, y, w)

    solver._fit = keeping
    solver.run(max(iterations))
    return solver, kept


def strategy_error(solver, player: int, model, sequences: np.ndarray, y: np.ndarray) -> float:
    """Mean L1 distance per information set between the strategy `model` plays and the exact targets' one."""
    view = solver.views[player]
    exact = np.zeros(view.num_sequences)
    exact[1 + sequences - view.offset] = y
    learned = np.zeros(view.num_sequences)
    learned[1:] = predict(model, solver.rows[player])
    return float(np.abs(view.regret_matching(learned) - view.regret_matching(exact)).sum() / view.num_infosets)


def r2(y: np.ndarray, w: np.ndarray, predicted: np.ndarray) -> float:
    """Weighted share of the variance of `y` that `predicted` explains."""
    mean = np.average(y, weights=w)
    return 1.0 - np.average((y - predicted) ** 2, weights=w) / np.average((y - mean) ** 2, weights=w)


def score(spec: dict, solver, player: int, sequences, X, y, w, seed: int) -> dict:
    """R^2 on the fitted rows, R^2 on a held-out tenth (fit to the rest), the strategy's distance from the
    exact targets', epochs, CPU seconds per fit."""
    start = time.process_time()
    model = fit(seeded(make_regressor(spec), seed), X, y, w)
    seconds = time.process_time() - start
    inside = r2(y, w, predict(model, X))
    distance = strategy_error(solver, player, model, sequences, y)
    order = np.random.default_rng(seed).permutation(len(y))
    held, rest = order[: len(y) // 10], order[len(y) // 10:]
    apart = fit(seeded(make_regressor(spec), seed), X[rest], y[rest], w[rest])
    return {"fit_r2": inside, "held_out_r2": r2(y[held], w[held], predict(apart, X[held])), "strategy_l1": distance,
            "epochs": getattr(model, "n_epochs_", None), "cpu_s": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("solver", choices=["deep-cfr", "sd-cfr", "dream"])
    parser.add_argument("options", help="solver options as JSON (the regressor is the preset's trees)")
    parser.add_argument("iterations", type=int, nargs="+", help="iterations whose advantage fits are kept")
    parser.add_argument("--game", default="leduc")
    parser.add_argument("--seed", type=int, default=100)
    parser.add_argument("--regressor", action="append", default=[], help="a regressor spec as JSON (repeatable)")
    args = parser.parse_args()
    specs = [TREES] + [json.loads(s) for s in args.regressor]
    solver, kept = captured_fits(args.solver, json.loads(args.options), args.game, args.iterations, args.seed)
    print(f"{args.solver} on {args.game}, seed {args.seed}: {len(kept)} advantage fits kept\n")
    print("| regressor | iteration | player | rows | R^2 fitted rows | R^2 held-out tenth | strategy L1 per set "
          "| epochs | CPU s per fit |")
    print("|---|---|---|---|---|---|---|---|---|")
    for spec in specs:
        for t, player, sequences, X, y, w in kept:
            s = score(spec, solver, player, sequences, X, y, w, args.seed)
            epochs = "" if s["epochs"] is None else s["epochs"]
            print(f"| {json.dumps(spec)} | {t} | {player} | {len(y)} | {s['fit_r2']:.3f} | {s['held_out_r2']:.3f} | "
                  f"{s['strategy_l1']:.3f} | {epochs} | {s['cpu_s']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
