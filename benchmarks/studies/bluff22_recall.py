"""External sampling on Bluff(2,2) walked by its rules: the full game against its last-r-bids recall
abstractions, at equal CPU time, scored exactly in the full game (issue 23, docs/large_rcfr.md).

    python -m benchmarks.studies.bluff22_recall                          # every arm, seed 0, 15/60/240 CPU seconds
    python -m benchmarks.studies.bluff22_recall --arms r2 r4 --seeds 1 2 --budgets 15 60
    python -m benchmarks.studies.bluff22_recall --report rows.jsonl --plot bluff22.png   # table and plot of a saved run

Each (arm, seed) runs in a process of its own (so that its peak resident memory is its own): ES with
``average_space="abstract"`` (the rules path keeps averages per set met), run in chunks of doubling size
until each cumulative budget of CPU seconds is passed, then the average policy's exact exploitability in
the full game by the public-tree walk (`rcfr.evaluation.bluff`; sets never met play uniformly).
Columns: iterations, nodes touched, CPU seconds of solving (the evaluation apart), sets met, bytes of the
solver's arrays (their capacity, `RulesBuffers.nbytes`), the process's peak resident MiB, the evaluation's
seconds and the exploitability in chips.
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

ARMS = ["r1", "r2", "r3", "r4", "r6", "r8", "full", "rcfr+", "rcfr+16k"]
LEAVES = {"rcfr+": 4096, "rcfr+16k": 16384}  # best-first leaves per player of the RCFR+ arms
#: the RCFR+ arm: lean sampled RCFR+ on the rules (best-first trees, Bluff's on-demand features, stored targets)
RCFR_PLUS = {"features_on_demand": True, "features": "liars_dice", "sampler": "external", "targets": "stored",
             "selection": "recent", "traversals": 1, "refit_every": 250, "capacity": 100_000,
             "regressor": {"name": "best_first", "max_leaves": 4096}}


def run_arm(arm: str, seed: int, budgets: list[float]) -> None:
    """One arm in this process: a JSON line per budget."""
    import rcfr
    from rcfr.abstraction import bluff_counters, make_abstraction
    from rcfr.errors import RulesPathWarning
    from rcfr.evaluation.bluff import evaluate
    from rcfr.solvers.mccfr import ExternalSamplingMCCFR

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RulesPathWarning)
        game = rcfr.load_game("liars_dice", dice1=2, dice2=2)
    options = {"seed": seed}
    if arm in LEAVES:
        from rcfr.solvers import SampledRCFRPlus
        regressor = {**RCFR_PLUS["regressor"], "max_leaves": LEAVES[arm]}
        solver = SampledRCFRPlus(game, **{**RCFR_PLUS, "regressor": regressor}, seed=seed)
        pairs = None
    elif arm != "full":
        options.update(abstraction=make_abstraction(game, "bluff_last_bids", r=int(arm[1:])), average_space="abstract")
    if arm not in LEAVES:
        pairs = bluff_counters(2, 2, None if arm == "full" else int(arm[1:]), forced=False)
        solver = ExternalSamplingMCCFR(game, **options)
    solver.run(1)  # compiled (cached on disk) before the clock starts
    cpu, chunk = 0.0, 64
    for budget in budgets:
        while cpu < budget:
            start = time.process_time()
            solver.run(chunk)
            cpu += time.process_time() - start
            rate = solver.iteration / max(cpu, 1e-3)  # iterations per CPU second so far
            chunk = int(min(2 * chunk, max(64, (budget - cpu) * rate)))  # land near the budget
        start = time.process_time()
        result = evaluate(game.rules, solver.average_policy(), default="uniform")
        seconds = time.process_time() - start
        print(json.dumps({"arm": arm, "seed": seed, "pairs": pairs, "iterations": solver.iteration,
                          "nodes": solver.nodes_touched, "cpu_s": round(cpu, 1), "sets_met": solver.buffers.num_sets,
                          "array_mib": round(held_bytes(solver) / 2**20, 1),
                          "peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                          "eval_s": round(seconds, 1), "exploitability": result.exploitability}), flush=True)


def held_bytes(solver) -> int:
    """Bytes of the solver's arrays sized by the sets met (their capacity); the RCFR+ arm adds its stored sums,
    its tally, its visited profile's per-set arrays and its fitted trees."""
    total = solver.buffers.nbytes()
    if hasattr(solver, "stored"):
        from rcfr.regressors import size
        total += sum(d.total.nbytes + d.written.nbytes for d in solver.stored)
        total += sum(a.nbytes for a in solver._tally if hasattr(a, "nbytes"))
        total += solver.visited.fresh.nbytes + solver.visited.listed.nbytes
        total += 8 * sum(size(r) or 0 for r in solver.regressors)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arms", nargs="+", default=ARMS, choices=ARMS)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--budgets", nargs="+", type=float, default=[15, 60, 240])
    parser.add_argument("--out", default=None, help="also append the JSON lines to this file")
    parser.add_argument("--report", metavar="JSONL", help="no runs: the table and plot of an earlier --out file")
    parser.add_argument("--plot", metavar="PNG", help="also draw exploitability against nodes, CPU s and MiB")
    parser.add_argument("--one", nargs=2, metavar=("ARM", "SEED"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        run_arm(args.one[0], int(args.one[1]), args.budgets)
        return
    if args.report:
        rows = [json.loads(line) for line in Path(args.report).read_text().splitlines() if line.strip()]
    else:
        rows = []
        for seed in args.seeds:
            for arm in args.arms:
                command = [sys.executable, "-m", __spec__.name, "--one", arm, str(seed), "--budgets", *map(str, args.budgets)]
                done = subprocess.run(command, capture_output=True, text=True, check=True)
                for line in done.stdout.splitlines():
                    rows.append(json.loads(line))
                    if args.out:
                        with open(args.out, "a") as f:
                            f.write(line + "\n")
                    print(line, flush=True)
    rows.sort(key=lambda r: (ARMS.index(r["arm"]), r["seed"], r["nodes"]))
    print("| arm | (I, a) pairs | seed | iterations | M nodes | CPU s | sets met | array MiB | peak MiB | eval s | "
          "exploitability |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['arm']} | {'-' if r['pairs'] is None else format(r['pairs'], ',')} | {r['seed']} | {r['iterations']:,} | {r['nodes'] / 1e6:,.0f} | "
              f"{r['cpu_s']} | {r['sets_met']:,} | {r['array_mib']:,} | {r['peak_mib']:,} | {r['eval_s']} | "
              f"{r['exploitability']:.4f} |")
    if args.plot:
        plot(rows, args.plot)


def plot(rows: list[dict], path: str) -> None:
    """Exploitability against nodes touched, CPU seconds and the arrays' MiB: one line per (arm, seed)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    axes_of = [("nodes", "nodes touched"), ("cpu_s", "CPU seconds (solving)"), ("array_mib", "MiB of the arrays")]
    from matplotlib.ticker import NullFormatter
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.8), sharey=True)
    colors = plt.get_cmap("tab10")(np.arange(len(ARMS)))
    for ax, (key, label) in zip(axes, axes_of):
        for i, arm in enumerate(ARMS):
            for seed in sorted({r["seed"] for r in rows if r["arm"] == arm}):
                mine = [r for r in rows if r["arm"] == arm and r["seed"] == seed]
                ax.plot([r[key] for r in mine], [r["exploitability"] for r in mine], "o-", color=colors[i],
                        alpha=0.85, label=arm if seed == min(r["seed"] for r in rows if r["arm"] == arm) else None)
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())  # minor labels of a short log axis overlap
        ax.set_xlabel(label)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("exploitability in the full game (chips)")
    fig.legend(*axes[0].get_legend_handles_labels(), title="arm", loc="center right")
    fig.suptitle("Bluff(2,2): external sampling on the full game and on its last-r-bids abstractions, and lean "
                 "RCFR+ (one line per seed)")
    fig.tight_layout(rect=(0, 0, 0.93, 1))
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
