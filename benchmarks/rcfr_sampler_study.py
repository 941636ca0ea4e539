"""Which data source, targets and regressor make sampled RCFR work (issue 13, item 3)?

Every combination of solver (sampled RCFR, RCFR+), sampler (external, outcome), targets (stored,
bootstrap) and regressor (best-first tree, LightGBM, MLP), each model at about the same size (a few
percent of the game's sequences), against tabular external and outcome sampling, on one game at one
budget of nodes touched; exact exploitability of the average policy, several seeds, 95% confidence
intervals. Outcome sampling runs 32x as many traversals per iteration as external sampling, so that an
iteration (one refit per player) costs about the same number of nodes touched for both.

    python benchmarks/rcfr_sampler_study.py --quick          # minutes
    python benchmarks/rcfr_sampler_study.py --out study.csv  # the table in docs/large_rcfr.md

``--on-demand`` runs the lean path (`features_on_demand=True`), ``--capacity`` and ``--selections`` its
bounded fit; probing (``--samplers probing``) runs as many traversals as external sampling.

Rows are appended to ``--out`` as runs finish (a rerun skips the rows it finds), then the table prints.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

import rcfr  # noqa: E402
from bench_large_games import parse  # noqa: E402
from rcfr.regressors import make_regressor  # noqa: E402

REGRESSORS = {  # name: (registry name, params) of about 46-48 parameters or leaves per player
    "best_first": ("best_first", {"max_leaves": 46}),
    "lightgbm": ("lightgbm", {"num_leaves": 4, "n_estimators": 12, "min_child_samples": 1}),
    "mlp": ("mlp", {"hidden": [1], "epochs": 20}),
}
TRAVERSALS = {"external": 32, "outcome": 1024, "probing": 32}
TABULAR = {"external": "es-mccfr", "outcome": "os-mccfr", "probing": "probing-mccfr"}
FIELDS = ["game", "method", "solver", "sampler", "targets", "regressor", "seed", "iterations", "nodes_touched",
          "size", "size_pct", "seconds", "exploitability"]


def regressor_spec(name: str):
    """A name of REGRESSORS, or ``best_first-<leaves>`` for a best-first tree of that many leaves."""
    if name.startswith("best_first-"):
        return "best_first", {"max_leaves": int(name.split("-")[1])}
    return REGRESSORS[name]


def arms(solvers, samplers, targets, regressors, lean=None):
    """Every combination; `lean` = (capacity, selections) for the on-demand path, None for the dense one."""
    for selection in (lean[1] if lean else [None]):
        for arm in itertools.product(solvers, samplers, targets, regressors):
            yield dict(zip(("solver", "sampler", "targets", "regressor"), arm),
                       **({"capacity": lean[0], "selection": selection} if lean else {}))
    for sampler in samplers:
        yield dict(solver=TABULAR[sampler], sampler=sampler, targets="", regressor="table")


def method_name(arm) -> str:
    if arm["regressor"] == "table":
        return arm["solver"]
    name = f"{arm['solver']} {arm['sampler'][:2]} {arm['targets']} {arm['regressor']}"
    if "selection" in arm:
        name += " lean" + (f" {arm['selection']} capacity {arm['capacity']}" if arm["capacity"] else "")
    return name


def run(game, game_name, features, arm, seed, max_nodes):
    """One seeded run to `max_nodes` nodes touched; CPU seconds exclude compilation (a throwaway solver
    runs one iteration first)."""
    build(game, features, arm, seed).run(1)
    solver, method = build(game, features, arm, seed), method_name(arm)
    start = time.process_time()
    while solver.nodes_touched < max_nodes:
        solver.run(1)
    seconds = time.process_time() - start
    size = solver.size() if arm["regressor"] != "table" else game.num_sequences
    arm = {k: arm[k] for k in ("solver", "sampler", "targets", "regressor")}
    return dict(game=game_name, method=method, **arm, seed=seed, iterations=solver.iteration,
                nodes_touched=solver.nodes_touched, size=size, size_pct=round(100 * size / game.num_sequences, 2),
                seconds=round(seconds, 2), exploitability=rcfr.exploitability(game, solver.average_policy()))


def build(game, features, arm, seed):
    if arm["regressor"] == "table":
        solver = rcfr.make_solver(arm["solver"], game, seed=seed)
    else:
        name, params = regressor_spec(arm["regressor"])
        lean = {}
        if "selection" in arm:
            lean = {"features_on_demand": True, "selection": arm["selection"]}
            if arm["capacity"]:
                lean["capacity"] = arm["capacity"]
        solver = rcfr.make_solver(arm["solver"], game, sampler=arm["sampler"], targets=arm["targets"],
                                  regressor=make_regressor(name, **params), features=features,
                                  traversals=TRAVERSALS[arm["sampler"]], seed=seed, **lean)
    return solver


def table(rows):
    groups = {}
    for r in rows:
        groups.setdefault((r["game"], r["method"]), []).append(r)
    lines = ["| game | method | seeds | size (% of sequences) | nodes touched | CPU s | exploitability | 95% CI |",
             "|---|---|---|---|---|---|---|---|"]
    for (game, method), members in sorted(groups.items(), key=lambda kv: (kv[0][0], np.mean(
            [float(m["exploitability"]) for m in kv[1]]))):
        values = np.array([float(m["exploitability"]) for m in members])
        half = stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else np.nan
        lines.append(f"| {game} | {method} | {len(values)} | {np.mean([float(m['size_pct']) for m in members]):.3g} | "
                     f"{np.mean([float(m['nodes_touched']) for m in members]):.3g} | "
                     f"{np.mean([float(m['seconds']) for m in members]):.1f} | {values.mean():.4f} | ±{half:.4f} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", default="goofspiel(cards=5)")
    parser.add_argument("--features", default="goofspiel")
    parser.add_argument("--nodes", type=float, default=2e7, help="nodes touched per run")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--regressors", nargs="+", default=list(REGRESSORS),
                        help=f"{', '.join(REGRESSORS)} or best_first-<leaves>")
    parser.add_argument("--solvers", nargs="+", default=["sampled-rcfr", "sampled-rcfr+"])
    parser.add_argument("--samplers", nargs="+", default=["external", "outcome"])
    parser.add_argument("--targets", nargs="+", default=["stored", "bootstrap"])
    parser.add_argument("--on-demand", action="store_true", help="the lean path (features_on_demand=True)")
    parser.add_argument("--capacity", type=int, default=0, help="on-demand: sequences per fit (0: the default)")
    parser.add_argument("--selections", nargs="+", default=["recent"], help="on-demand: recent and/or uniform")
    parser.add_argument("--quick", action="store_true", help="1e6 nodes, 2 seeds, best-first trees only")
    parser.add_argument("--out", default="rcfr_sampler_study.csv")
    args = parser.parse_args()
    if args.quick:
        args.nodes, args.seeds, args.regressors = 1e6, 2, ["best_first"]
    name, params = parse(args.game)
    game = rcfr.load_game(name, **params)
    out = Path(args.out)
    rows = list(csv.DictReader(out.open())) if out.exists() else []
    done = {(r["game"], r["method"], int(r["seed"])) for r in rows}
    lean = (args.capacity, args.selections) if args.on_demand else None
    for arm in arms(args.solvers, args.samplers, args.targets, args.regressors, lean):
        for seed in range(args.seeds):
            method = method_name(arm)
            if (args.game, method, seed) in done:
                continue
            row = run(game, args.game, args.features, arm, seed, args.nodes)
            rows.append(row)
            new = not out.exists()
            with out.open("a", newline="") as f:
                writer = csv.DictWriter(f, FIELDS)
                if new:
                    writer.writeheader()
                writer.writerow(row)
                f.flush()
                os.fsync(f.fileno())
            print(f"{method} seed {seed}: {row['exploitability']:.4f} ({row['seconds']} s)", flush=True)
    print(table(rows))


if __name__ == "__main__":
    main()
