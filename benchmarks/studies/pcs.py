"""Public chance sampling against chance sampling and vanilla CFR: exploitability against CPU seconds and
against nodes touched, on a common budget of solve time per run.

    python -m benchmarks.studies.pcs --games leduc,liars_dice,leduc13 --seconds 20 --seeds 3 --json out.json
    python -m benchmarks.studies.pcs --plot docs/figures/pcs.png out.json [more.json]   # plot saved runs

Each run doubles its iteration count until `--seconds` of process CPU time (the solve only: compile and
the public tree's derivation are timed apart; evaluation is not counted) and records exploitability
after each step. Tables give the exploitability reached by 1/8, 1/4, 1/2 and all of the budget and at
fixed numbers of nodes touched (mean and 95% confidence interval over seeds for the sampled solvers;
vanilla CFR and enumerated PCS are deterministic, one run), plus speeds and memory.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

import rcfr  # noqa: E402
from rcfr import evaluate, make_solver  # noqa: E402
from rcfr.files import write_json  # noqa: E402
from rcfr.sampling.public import public_tree, public_tree_nbytes  # noqa: E402

GAMES = {"leduc": ("leduc", {}), "liars_dice": ("liars_dice", {}), "leduc13": ("leduc", {"ranks": 13}),
         "kuhn": ("kuhn", {}), "dieroll": ("dieroll", {})}
SOLVERS = {"cfr": ("cfr", {}), "cscfr": ("cscfr", {}), "pcs": ("pcs-cfr", {}),
           "pcs-enumerate": ("pcs-cfr", {"public_chance": "enumerate"})}
DETERMINISTIC = ("cfr", "pcs-enumerate")
TITLES = {"leduc": "Leduc", "liars_dice": "Bluff(1,1)", "leduc13": "Leduc, 13 ranks", "kuhn": "Kuhn",
          "dieroll": "Die-Roll Poker"}


def run_one(game, name, options, seconds, seed):
    """(CPU seconds, nodes touched, iterations, exploitability) after each doubling of the iterations."""
    solver = make_solver(name, game, **options) if name == "cfr" else make_solver(name, game, seed=seed, **options)
    trace, spent, step = [], 0.0, 1
    while spent < seconds:
        start = time.process_time()
        solver.run(step)
        spent += time.process_time() - start
        trace.append((spent, solver.nodes_touched, solver.iteration,
                      evaluate(game, solver.average_policy()).exploitability))
        step = solver.iteration
    return np.array(trace)


def at(trace, column, limit):
    """The exploitability of the last record whose `column` is within `limit` (nan if none)."""
    rows = trace[trace[:, column] <= limit]
    return rows[-1, 3] if len(rows) else np.nan


def summary(values):
    values = np.asarray(values)
    if np.isnan(values).any():
        return "-"
    if len(values) == 1:
        return f"{values[0]:.4f}"
    half = stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))
    return f"{values.mean():.4f} ± {half:.4f}"


def plot(results: dict, path: str) -> None:
    """Exploitability against CPU seconds (top) and nodes touched (bottom), one column per game; sampled
    solvers: the mean over seeds of each run's step function, on a common grid."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, len(results), figsize=(4.2 * len(results), 7), squeeze=False)
    for col, (key, result) in enumerate(results.items()):
        for row, (column, label) in enumerate(((0, "CPU seconds"), (1, "nodes touched"))):
            ax = axes[row, col]
            for name, runs in result["runs"].items():
                runs = [np.array(r) for r in runs]
                grid = np.geomspace(max(r[0, column] for r in runs), min(r[-1, column] for r in runs), 60)
                values = np.mean([[at(r, column, x) for x in grid] for r in runs], axis=0)
                ax.plot(grid, values, label=name)
            ax.set(xscale="log", yscale="log", xlabel=label, ylabel="exploitability (chips)")
            ax.grid(True, which="major", alpha=0.3)
            if row == 0:
                ax.set_title(TITLES.get(key, key))
        axes[0, col].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("saved", nargs="*", help="with --plot: JSON files written by --json, plotted without running")
    parser.add_argument("--plot", default=None, help="write a figure of the results here")
    parser.add_argument("--games", default="leduc,liars_dice,leduc13")
    parser.add_argument("--solvers", default="cfr,cscfr,pcs,pcs-enumerate")
    parser.add_argument("--seconds", type=float, default=20.0, help="CPU seconds of solving per run")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args(argv)
    if args.saved:
        import json
        results = {}
        for path in args.saved:
            results.update(json.loads(Path(path).read_text()))
        plot(results, args.plot)
        return
    out = {}
    for key in args.games.split(","):
        game_name, params = GAMES[key]
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        start = time.perf_counter()
        game = rcfr.load_game(game_name, **params)
        load = time.perf_counter() - start
        start = time.perf_counter()
        tree = public_tree(game)
        build = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        kept = public_tree_nbytes(tree)
        print(f"\n{game}\nload {load:.1f} s; public tree: {len(tree.kind):,} public states, "
              f"{len(tree.up0):,} + {len(tree.up1):,} slots, derived in {build:.2f} s, keeps {kept / 2 ** 20:.1f} MiB "
              f"({kept / game.num_histories:.1f} B/history); peak RSS {peak / 1024:.0f} MiB (was {before / 1024:.0f})")
        del tree
        rows = {}
        for label in args.solvers.split(","):
            name, options = SOLVERS[label]
            warm = make_solver(name, game, **options)
            warm.run(2)  # compile before timing
            seeds = 1 if label in DETERMINISTIC else args.seeds
            rows[label] = [run_one(game, name, options, args.seconds, seed) for seed in range(seeds)]
            del warm
        times = [args.seconds / 8, args.seconds / 4, args.seconds / 2, args.seconds]
        top = min(max(t[-1, 1] for t in traces) for traces in rows.values())
        nodes = [10.0 ** k for k in range(6, 13) if 10.0 ** k <= top][-4:]
        print("\n| solver | it/s | nodes/s | " + " | ".join(f"expl @ {t:g} s" for t in times)
              + " | " + " | ".join(f"expl @ {n:.0e} nodes" for n in nodes) + " |")
        print("|" + "---|" * (3 + len(times) + len(nodes)))
        for label, traces in rows.items():
            speed = np.mean([t[-1, 2] / t[-1, 0] for t in traces])
            nps = np.mean([t[-1, 1] / t[-1, 0] for t in traces])
            cells = [summary([at(t, 0, s) for t in traces]) for s in times]
            cells += [summary([at(t, 1, n) for t in traces]) for n in nodes]
            print(f"| {label} | {speed:,.0f} | {nps:.3g} | " + " | ".join(cells) + " |")
        out[key] = {"game": str(game), "public_tree_seconds": build, "public_tree_bytes": kept,
                    "runs": {label: [t.tolist() for t in traces] for label, traces in rows.items()}}
    if args.json:
        write_json(args.json, out)
    if args.plot:
        plot(out, args.plot)


if __name__ == "__main__":
    main()
