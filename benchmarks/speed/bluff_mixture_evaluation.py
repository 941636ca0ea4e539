"""Exact exploitability of a snapshot mixture's average policy on Bluff's public bid tree (issue 34, item 6):
lean sampled RCFR+ with ``average="mixture"`` trained briefly, then its average policy materialized on the public
tree (`rcfr.solvers.public_tree.mixture.public_mixture`, every snapshot's compiled model at every (bid sequence,
roll)) and evaluated exactly (`rcfr.exploitability`, `rcfr.evaluation.bluff`). One subprocess per game, so each
peak RSS is its own; CPU seconds are the process's. Target (Bluff(2,2)): materialize + evaluate <= 600 CPU s, peak
<= 8 GB (the table gives GiB). See docs/large_rcfr.md, "Bounded state: feature-row targets and snapshot averages".

    python -m benchmarks.speed.bluff_mixture_evaluation --dice 2,2 --snapshots 4 --iterations 40
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def run_case(dice1: int, dice2: int, snapshots: int, iterations: int, leaves: int) -> dict:
    import rcfr
    from rcfr.solvers import SampledRCFRPlus
    from rcfr.solvers.public_tree.mixture import public_mixture

    game = rcfr.load_game("liars_dice", dice1=dice1, dice2=dice2, compiled=False)
    start = time.process_time()
    run = SampledRCFRPlus(game, features_on_demand=True, features="liars_dice", traversals=2, seed=0,
                          profile="model", average="mixture", snapshots=snapshots, refit_every=2, capacity=10_000,
                          regressor={"name": "best_first", "max_leaves": leaves}).run(iterations)
    trained = time.process_time() - start
    start = time.process_time()
    stats = {}  # what run.average_policy() makes on Bluff, with the counts
    policy = public_mixture(game.rules, run._kept_snapshots(), run.encoder, stats=stats)
    built = time.process_time() - start
    start = time.process_time()
    exploitability = rcfr.exploitability(game, policy)
    evaluated = time.process_time() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    return {"game": f"Bluff({dice1},{dice2})", "snapshots": [len(s.kept) + 1 for s in run.snapshots],
            "seen": [s.seen for s in run.snapshots], "iterations": iterations, "train_s": trained,
            "materialize_s": built, "evaluate_s": evaluated, "peak_gb": peak, "exploitability": exploitability,
            "sets": len(policy.codes), "predicted": stats["predicted"] / (stats["sets"] * stats["snapshots"] / 2), "actions": int(policy.first[-1]), "dtype": str(policy.probs.dtype),
            "policy_gb": (policy.codes.nbytes + policy.first.nbytes + policy.probs.nbytes) / 2**30}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dice", nargs="+", default=["2,2"], help="games as D1,D2 (default 2,2)")
    parser.add_argument("--snapshots", type=int, default=4, help="snapshots=K kept per player (default 4)")
    parser.add_argument("--iterations", type=int, default=40, help="iterations trained first (default 40)")
    parser.add_argument("--leaves", type=int, default=64, help="leaves of each tree (default 64)")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        d1, d2 = map(int, args.case.split(","))
        print(json.dumps(run_case(d1, d2, args.snapshots, args.iterations, args.leaves)))
        return
    rows = []
    for dice in args.dice:
        out = subprocess.run([sys.executable, "-m", "benchmarks.speed.bluff_mixture_evaluation", "--case", dice,
                              "--snapshots", str(args.snapshots), "--iterations", str(args.iterations),
                              "--leaves", str(args.leaves)], capture_output=True, text=True, check=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print("| game | snapshots (kept + current, per player) | iterations (train CPU s) | sets | actions (dtype) | "
          "policy GiB | (set, snapshot) pairs predicted | materialize CPU s | evaluation CPU s | peak RSS GiB | exploitability |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['game']} | {r['snapshots'][0]}, {r['snapshots'][1]} (of {r['seen'][0]}, {r['seen'][1]} seen) | "
              f"{r['iterations']} ({r['train_s']:.1f}) | {r['sets']:,} | {r['actions']:,} ({r['dtype']}) | "
              f"{r['policy_gb']:.2f} | {r['predicted']:.1%} | {r['materialize_s']:.1f} | {r['evaluate_s']:.1f} | {r['peak_gb']:.2f} | "
              f"{r['exploitability']:.6f} |")


if __name__ == "__main__":
    main()
