"""Why the bounded learned arm loses on Bluff(2,2): a ladder from the arm toward the exact table, at equal
iterations, scored exactly in the full game (issue 34; docs/large_rcfr.md, "Why the bounded learned arm loses").

    python -m benchmarks.studies.bluff22_learned_ladder --rungs L0 L1 --iterations 20000 --out rows.jsonl
    python -m benchmarks.studies.bluff22_learned_ladder --rungs L1 L3 --seeds 1 2 --iterations 20000 --out rows.jsonl
    python -m benchmarks.studies.bluff22_learned_ladder --report rows.jsonl    # the table of a saved run

Every rung is lean sampled RCFR+ on Bluff(2,2) walked by its rules (external sampling, one traversal an iteration,
Bluff's on-demand features, the model evaluated inside the walk) and changes one thing from the one above it:

* L0: the arm `configs/arm/bluff22_equal_memory/rcfr+-trees-16mib.yaml` (best-first trees of 256 leaves,
  bootstrapped targets in a reservoir of 12,000 rows a player, SD-CFR's mixture of 4 snapshots, a refit every
  200, no set numbered);
* L1 (averaging): L0 with ``average="sums"``, the exact average of the played strategies (sets numbered);
* L1r50 (staleness): L1 with a refit every 50;
* L2 (capacity): L1 with trees of 4,096 leaves (L2k: 1,024);
* L3 (target noise): L1 with ``targets="stored"``, each sequence's Q-regret sum of every sample, a fit on the
  12,000 most recently written;
* L3x4k: L3 with trees of 4,096 leaves;
* L4 (model error): L3 with trees of 12,000 leaves, one a training row: the fit reproduces the stored targets;
* es, es-r2: tabular external sampling on the full game (public tree, float32) and on the last 2 bids;
* es-rm+: es with RCFR+'s clipping (``regret_matching="rm+"``): the exact table behind the same walk, updated
  every iteration.

Each (rung, seed) runs in a process of its own; the solve is timed in process CPU (the first iteration,
compilation, before the clock), then the average policy's exact exploitability (sets never met play uniformly).
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
from pathlib import Path

import numpy as np

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

#: the arm's options (configs/arm/bluff22_equal_memory/rcfr+-trees-16mib.yaml)
ARM = {"sampler": "external", "features_on_demand": True, "features": {"name": "liars_dice", "bids": 4},
       "profile": "model", "targets": "bootstrap", "average": "mixture", "snapshots": 4, "capacity": 12_000,
       "traversals": 1, "refit_every": 200}
SUMS = {"average": "sums", "snapshots": None}
STORED = {**SUMS, "targets": "stored"}
RUNGS = {  # rung: (what changes, solver options over ARM, best-first leaves)
    "L0": ("the arm", {}, 256),
    "L1": ("average: sums", SUMS, 256),
    "L1r50": ("L1, refit every 50", {**SUMS, "refit_every": 50}, 256),
    "L2k": ("L1, 1,024 leaves", SUMS, 1024),
    "L2": ("L1, 4,096 leaves", SUMS, 4096),
    "L3": ("L1, targets: stored", STORED, 256),
    "L3x4k": ("L3, 4,096 leaves", STORED, 4096),
    "L4": ("L3, 12,000 leaves (exact on its rows)", STORED, 12_000),
    "es": ("ES full game", None, None),
    "es-r2": ("ES last 2 bids", None, None),
    "es-rm+": ("ES full game, rm+ (the exact table behind the same walk)", None, None),
}


def build(rung: str, seed: int):
    import rcfr
    from rcfr import make_solver
    from rcfr.errors import RulesPathWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RulesPathWarning)
        game = rcfr.load_game("liars_dice", dice1=2, dice2=2, compiled=False)
    if rung in ("es", "es-rm+"):
        return game, make_solver("es-mccfr", game, dtype="float32", seed=seed,
                                 regret_matching="rm+" if rung == "es-rm+" else "rm")
    if rung == "es-r2":
        from rcfr.abstraction import make_abstraction
        return game, make_solver("es-mccfr", game, abstraction=make_abstraction(game, "bluff_last_bids", r=2),
                                 average_space="abstract", seed=seed)
    from rcfr.regressors import make_regressor
    _, changes, leaves = RUNGS[rung]
    options = {**ARM, **changes}
    options = {k: v for k, v in options.items() if v is not None}
    return game, make_solver("sampled-rcfr+", game, **options, seed=seed,
                             regressor=make_regressor("best_first", max_leaves=leaves, min_samples_leaf=1))


def run_rung(rung: str, seed: int, iterations: int) -> None:
    """One rung in this process: one JSON line."""
    import rcfr
    game, solver = build(rung, seed)
    solver.run(1)  # compiled (cached on disk) before the clock starts
    cpu, chunk = 0.0, 200
    start = time.process_time()
    while solver.iteration < iterations:
        solver.run(min(chunk, iterations - solver.iteration))
    cpu = time.process_time() - start
    state = solver.state_bytes()
    solve_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.process_time()
    result = rcfr.evaluate(game, solver.average_policy(), default="uniform")
    seconds = time.process_time() - start
    print(json.dumps({"rung": rung, "seed": seed, "iterations": solver.iteration, "nodes": solver.nodes_touched,
                      "cpu_s": round(cpu, 1), "state_bytes": int(state), "solve_peak_mib": round(solve_peak),
                      "peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                      "eval_s": round(seconds, 1), "exploitability": result.exploitability}), flush=True)


def t95(n: int) -> float:
    return {2: 12.706, 3: 4.303, 4: 3.182, 5: 2.776}.get(n, 1.96)


def report(rows: list[dict]) -> None:
    order = list(RUNGS)
    rows = sorted(rows, key=lambda r: (order.index(r["rung"]), r["iterations"], r["seed"]))
    print("| rung | change | seed | iterations | M nodes | CPU s | it / CPU s | state bytes | peak MiB | eval s | "
          "exploitability |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['rung']} | {RUNGS[r['rung']][0]} | {r['seed']} | {r['iterations']:,} | {r['nodes'] / 1e6:.1f} | "
              f"{r['cpu_s']} | {r['iterations'] / max(r['cpu_s'], 1e-9):,.0f} | {r['state_bytes']:,} | "
              f"{r['peak_mib']:,} | {r['eval_s']} | {r['exploitability']:.4f} |")
    print()
    print("| rung | iterations | seeds | exploitability (mean) | 95% t interval |")
    print("|---|---|---|---|---|")
    groups: dict[tuple, list[float]] = {}
    for r in rows:
        groups.setdefault((r["rung"], r["iterations"]), []).append(r["exploitability"])
    for (rung, its), values in groups.items():
        v = np.array(values)
        half = t95(len(v)) * v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else float("nan")
        print(f"| {rung} | {its:,} | {len(v)} | {v.mean():.4f} | {'-' if len(v) == 1 else f'±{half:.4f}'} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rungs", nargs="+", default=list(RUNGS), choices=list(RUNGS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--iterations", type=int, default=20_000)
    parser.add_argument("--out", default=None, help="also append the JSON lines to this file")
    parser.add_argument("--report", metavar="JSONL", help="no runs: the table of an earlier --out file")
    parser.add_argument("--one", nargs=2, metavar=("RUNG", "SEED"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        run_rung(args.one[0], int(args.one[1]), args.iterations)
        return
    if args.report:
        report([json.loads(line) for line in Path(args.report).read_text().splitlines() if line.strip()])
        return
    rows = []
    for seed in args.seeds:
        for rung in args.rungs:
            command = [sys.executable, "-m", __spec__.name, "--one", rung, str(seed),
                       "--iterations", str(args.iterations)]
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode:
                print(f"{rung} seed {seed} failed:\n{done.stderr[-3000:]}", flush=True)
                continue
            for line in done.stdout.splitlines():
                if not line.startswith("{"):
                    continue
                rows.append(json.loads(line))
                if args.out:
                    with open(args.out, "a") as f:
                        f.write(line + "\n")
                print(line, flush=True)
    report(rows)


if __name__ == "__main__":
    main()
