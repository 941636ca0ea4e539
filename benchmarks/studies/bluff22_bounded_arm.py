"""One bounded 16 MiB learned arm of `bluff22_equal_memory` on Bluff(2,2), on a CPU budget of solving, then the exact
exploitability of its average (the snapshot mixture on the public tree): one JSON row to stdout and to `--out`.

    python -m benchmarks.studies.bluff22_bounded_arm rcfr+-window --seed 1 --out benchmarks/results/bluff22_bounded_arm.jsonl
    python -m benchmarks.studies.bluff22_bounded_arm rcfr+-uniform      # the bootstrapped rows as a uniform reservoir

The arms are the preset's (`configs/arm/bluff22_equal_memory/rcfr{,+}-trees-16mib.yaml`: trees of 256 leaves inside
the walk, 12,000 rows a player, 4 snapshots, a refit every 200), with the row buffer named: ``rcfr-rows`` (RCFR,
sampled regrets, Deep CFR's uniform reservoir), ``rcfr+-window`` (RCFR+, bootstrapped rows, the last 12,000 written:
the default) and ``rcfr+-uniform`` (the same in a uniform reservoir). The solve runs in chunks of 200 iterations
until `--cpu` process CPU seconds, so it includes numba's first compile of the walks when the disk cache is cold:
run once to warm it. docs/large_rcfr.md, "Bootstrapped rows: a window of the freshest, not a reservoir of all".
"""

from __future__ import annotations

import argparse
import json
import resource
import time

import rcfr
from rcfr.solvers import SampledRCFR, SampledRCFRPlus

ARMS = {"rcfr-rows": (SampledRCFR, {"targets": "rows"}),
        "rcfr+-window": (SampledRCFRPlus, {"targets": "bootstrap", "selection": "recent"}),
        "rcfr+-uniform": (SampledRCFRPlus, {"targets": "bootstrap", "selection": "uniform"})}
PRESET = {"features_on_demand": True, "features": "liars_dice", "sampler": "external", "profile": "model",
          "average": "mixture", "snapshots": 4, "capacity": 12_000, "traversals": 1, "refit_every": 200,
          "regressor": {"name": "best_first", "max_leaves": 256}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("arm", choices=sorted(ARMS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cpu", type=float, default=120.0, help="CPU seconds of solving")
    parser.add_argument("--out", default=None, help="a jsonl file to append the row to")
    args = parser.parse_args()
    game = rcfr.load_game("liars_dice", dice1=2, dice2=2, compiled=False)
    make, options = ARMS[args.arm]
    solver = make(game, **PRESET, **options, seed=args.seed)
    start = time.process_time()
    while time.process_time() - start < args.cpu:
        solver.run(200)
    cpu = time.process_time() - start
    begin = time.process_time()
    exploitability = rcfr.exploitability(game, solver.average_policy())
    row = {"arm": args.arm, "seed": args.seed, "iterations": solver.iteration, "nodes": solver.nodes_touched,
           "cpu_s": round(cpu, 1), "state_bytes": solver.state_bytes(), "eval_s": round(time.process_time() - begin, 1),
           "exploitability": exploitability, "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    print(json.dumps(row), flush=True)
    if args.out:
        with open(args.out, "a") as f:
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
