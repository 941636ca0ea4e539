"""CFR and chance-sampled CFR of Bluff on its public bid tree (`rcfr.solvers.public_tree`): time per
iteration, exact exploitability of the average from the table, memory, one core (issue 35).

    python -m benchmarks.speed.bluff_public_cfr --dice 2,2 --cases cs vanilla          # float32 tables by default
    python -m benchmarks.speed.bluff_public_cfr --dice 2,1 --cases cs vanilla --dtype float64 float32

Each case runs in a process of its own, so its peak resident memory is its own. A case builds the solver
(offsets and tables), runs `--cs-iterations` chance-sampled iterations (``cs``: timed one by one; the first
includes numba's load from its cache) or `--vanilla-iterations` vanilla CFR iterations (``vanilla``), then
evaluates the average exactly (`BluffPublicCFR.exploitability`). ``--recall r`` runs on the last-r-bids
abstraction (regrets per abstract set, averages per full set). ``--sampled-walk vector`` times a
chance-sampled iteration on the vector walk instead of the scalar one (the same numbers, bit for bit).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

COLUMNS = ["dice", "case", "walk", "recall", "dtype", "build_s", "table_mib", "iterations", "first_s", "median_s", "max_s",
           "eval_s", "exploitability", "peak_mib"]


def run_case(dice: tuple[int, int], case: str, recall: int | None, dtype: str, iterations: int,
             sampled_walk: str = "scalar") -> dict:
    import numpy as np

    import rcfr
    from rcfr.abstraction import make_abstraction
    from rcfr.errors import RulesPathWarning
    from rcfr.solvers.public_tree import BluffPublicCFR

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RulesPathWarning)
        game = rcfr.load_game("liars_dice", dice1=dice[0], dice2=dice[1], compiled=False)
    abstraction = None if recall is None else make_abstraction(game, "bluff_last_bids", r=recall)
    start = time.process_time()
    solver = BluffPublicCFR(game, "cscfr", chance_sampling="single" if case == "cs" else "all",
                            abstraction=abstraction, dtype=dtype, seed=0, sampled_walk=sampled_walk)
    build = time.process_time() - start
    times = []
    for _ in range(iterations):
        start = time.process_time()
        solver.iterate()
        times.append(time.process_time() - start)
    start = time.process_time()
    value = solver.exploitability().exploitability
    evaluation = time.process_time() - start
    tables = solver.regrets.nbytes + solver.avg.nbytes + (solver.delta.nbytes if solver.abstracted else 0)
    walk = sampled_walk if case == "cs" else "vector"
    return {"dice": f"{dice[0]},{dice[1]}", "case": case, "walk": walk, "recall": recall or "full", "dtype": dtype,
            "build_s": round(build, 2), "table_mib": round(tables / 2**20), "iterations": iterations,
            "first_s": round(times[0], 3), "median_s": round(float(np.median(times)), 3),
            "max_s": round(max(times), 3), "eval_s": round(evaluation, 2), "exploitability": f"{value:.9f}",
            "peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dice", default="2,2")
    parser.add_argument("--cases", nargs="+", default=["cs", "vanilla"], choices=["cs", "vanilla"])
    parser.add_argument("--dtype", nargs="+", default=["float32"], choices=["float32", "float64"])
    parser.add_argument("--recall", nargs="+", type=int, default=[], help="last-r-bids abstractions (full game: none)")
    parser.add_argument("--sampled-walk", default="scalar", choices=["scalar", "vector"])
    parser.add_argument("--cs-iterations", type=int, default=20)
    parser.add_argument("--vanilla-iterations", type=int, default=2)
    parser.add_argument("--case", help=argparse.SUPPRESS)  # one case, in a child process
    args = parser.parse_args()
    dice = tuple(int(d) for d in args.dice.split(","))
    if args.case:
        case, recall, dtype = json.loads(args.case)
        iterations = args.cs_iterations if case == "cs" else args.vanilla_iterations
        print(json.dumps(run_case(dice, case, recall, dtype, iterations, args.sampled_walk)))
        return
    print("| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS))
    for case in args.cases:
        for recall in [None, *args.recall]:
            for dtype in args.dtype:
                child = [sys.executable, "-m", __spec__.name, *sys.argv[1:], "--case", json.dumps([case, recall, dtype])]
                row = json.loads(subprocess.run(child, check=True, capture_output=True, text=True).stdout.splitlines()[-1])
                print("| " + " | ".join(str(row[c]) for c in COLUMNS) + " |", flush=True)


if __name__ == "__main__":
    main()
