"""Monte Carlo CFR benchmark: iterations per second on one core, and exploitability of the average
policy after 1e3 .. 1e6 iterations (mean and standard deviation over seeds).

    python -m benchmarks.speed.mccfr --game leduc --seeds 5 --max-iterations 1000000

Issue 6 targets on Leduc: external sampling >= 70,000 it/s, outcome sampling >= 230,000 it/s
(a C++ reference does about 35,000 and 114,000 it/s and reaches about 0.022 (ES) and 0.17 (OS)
chips after 1e6 iterations). One iteration = one traversal per player (alternating forms) or one
traversal updating both (simultaneous OS and CS).
"""

from __future__ import annotations

import argparse
import os
import time

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


import numpy as np  # noqa: E402

import rcfr  # noqa: E402
from rcfr import evaluate, make_solver  # noqa: E402
from rcfr.files import write_json  # noqa: E402

CONFIGS = {
    "es": ("es-mccfr", {}),
    "es-rm+": ("es-mccfr", {"regret_matching": "rm+"}),
    "os": ("os-mccfr", {}),
    "os-simultaneous": ("os-mccfr", {"updates": "simultaneous"}),
    "os-optimistic": ("os-mccfr", {"average_mode": "optimistic"}),
    "os-lazy": ("os-mccfr", {"average_mode": "lazy"}),
    "es-lazy": ("es-mccfr", {"average_mode": "lazy"}),
    "vr": ("vr-mccfr", {}),
    "cs": ("cscfr", {}),
    "pure": ("pure-cfr", {}),
    "as": ("as-mccfr", {}),
    "probing": ("probing-mccfr", {}),
    "pcs": ("pcs-cfr", {}),
}


def run_one(game, name, options, checkpoints, seed):
    solver = make_solver(name, game, seed=seed, **options)
    seconds, values = 0.0, []
    for target in checkpoints:
        start = time.perf_counter()
        solver.run(target - solver.iteration)
        seconds += time.perf_counter() - start
        values.append(evaluate(game, solver.average_policy()).exploitability)
    return solver.iteration / seconds, solver.nodes_touched / seconds, values


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="leduc")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--max-iterations", type=float, default=1e6)
    parser.add_argument("--cs-max-iterations", type=float, default=1e5,
                        help="chance and public chance sampling cost far more per iteration; their own cap")
    parser.add_argument("--configs", default="es,es-rm+,es-lazy,os,os-simultaneous,os-optimistic,os-lazy,vr,cs",
                        help=f"comma-separated, from {', '.join(CONFIGS)}")
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args(argv)
    game = rcfr.load_game(args.game)
    print(f"{game}; {args.seeds} seeds; one core; timings exclude evaluation\n")
    rows = []
    for key in args.configs.split(","):
        name, options = CONFIGS[key]
        cap = args.cs_max_iterations if name in ("cscfr", "pcs-cfr") else args.max_iterations
        checkpoints = [int(10 ** k) for k in range(3, 7) if 10 ** k <= cap]
        make_solver(name, game, **options).run(10)  # compile before timing
        results = [run_one(game, name, options, checkpoints, seed) for seed in range(args.seeds)]
        speed = np.array([r[0] for r in results])
        nodes = np.array([r[1] for r in results])
        values = np.array([r[2] for r in results])
        rows.append({"config": key, "solver": name, "options": options, "iterations_per_second": speed.mean(),
                     "nodes_per_second": nodes.mean(), "checkpoints": checkpoints,
                     "exploitability_mean": values.mean(0).tolist(), "exploitability_std": values.std(0).tolist()})
    header = "| config | it/s | nodes/s | " + " | ".join(f"expl @ 1e{k}" for k in range(3, 7)) + " |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for row in rows:
        cells = [f"{m:.4f} ± {s:.4f}" for m, s in zip(row["exploitability_mean"], row["exploitability_std"])]
        cells += ["-"] * (4 - len(cells))
        print(f"| {row['config']} | {row['iterations_per_second']:,.0f} | {row['nodes_per_second']:,.0f} | "
              + " | ".join(cells) + " |")
    if args.json:
        write_json(args.json, {"game": str(game), "seeds": args.seeds, "rows": rows})


if __name__ == "__main__":
    main()
