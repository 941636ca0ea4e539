"""Which data source, targets and regressor make sampled RCFR work (issue 13, item 3)?

Every combination of solver (sampled RCFR, RCFR+), sampler (external, outcome), targets (stored,
bootstrap) and regressor (best-first tree, LightGBM, MLP), each model at about the same size (a few
percent of the game's sequences), against tabular external and outcome sampling, on one game at one
budget of nodes touched; exact exploitability of the average policy, several seeds, 95% confidence
intervals. Outcome sampling runs 32x as many traversals per iteration as external sampling, so that an
iteration (one refit per player) costs about the same number of nodes touched for both.

    python -m benchmarks.studies.sampler_study --quick          # minutes
    python -m benchmarks.studies.sampler_study --out study.csv  # the table in docs/large_rcfr.md

``--on-demand`` runs the lean path (`features_on_demand=True`), ``--capacity`` and ``--selections`` its
bounded fit; probing (``--samplers probing``) runs as many traversals as external sampling.
``--traversals`` and ``--refit-every`` override the per-sampler traversals and the refit schedule (the
large games' arms: one traversal, refits every 100 or 1,000 iterations); ``--pairs`` runs given
(solver, targets) pairs instead of every combination; ``--diagnose FILE`` writes one JSON line per fit
(the regression error of the fit on its own training set against the variance of its targets; for
reservoir targets also the sampling variance of the pooled targets), its CPU time left out of the run's.

    python -m benchmarks.studies.sampler_study --game 'goofspiel(cards=7)' --on-demand --samplers external \
        --pairs sampled-rcfr+:stored sampled-rcfr:reservoir --traversals 1 --refit-every 100 \
        --regressors best_first-717 lightgbm-45x16 mlp-13 --nodes 2e7 --seeds 2 --out goofspiel7.csv

Rows are appended to ``--out`` as runs finish (a rerun skips the rows it finds), then the table prints.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import os
import resource
import time
from pathlib import Path

import numpy as np
from scipy import stats

import rcfr  # noqa: E402
from benchmarks.speed.large_games import parse  # noqa: E402
from rcfr.regressors import make_regressor  # noqa: E402

REGRESSORS = {  # name: (registry name, params) of about 46-48 parameters or leaves per player
    "best_first": ("best_first", {"max_leaves": 46}),
    "lightgbm": ("lightgbm", {"num_leaves": 4, "n_estimators": 12, "min_child_samples": 1}),
    "mlp": ("mlp", {"hidden": [1], "epochs": 20}),
}
TRAVERSALS = {"external": 32, "outcome": 1024, "probing": 32}
TABULAR = {"external": "es-mccfr", "outcome": "os-mccfr", "probing": "probing-mccfr"}
FIELDS = ["game", "method", "solver", "sampler", "targets", "regressor", "seed", "iterations", "nodes_touched",
          "size", "size_pct", "seconds", "exploitability", "traversals", "refit_every", "model_bytes",
          "solver_bytes", "peak_mib"]


def regressor_spec(name: str):
    """A name of REGRESSORS, ``best_first-<leaves>`` (a best-first tree of that many leaves),
    ``lightgbm-<trees>x<leaves>`` (LightGBM, `min_child_samples` 5: see `rcfr.regressors.library`) or
    ``mlp-<units>[x<units>...][e<epochs>]`` (the torch MLP with these hidden layers, 20 epochs a fit
    unless given, its other options the defaults)
    or ``exact`` (the exact table over the encoder's rows: no regression error, docs/large_rcfr.md "Why")."""
    kind, _, size = name.partition("-")
    if name == "exact":
        return "table", {}
    try:
        if size and kind == "best_first":
            return "best_first", {"max_leaves": int(size)}
        if size and kind == "lightgbm":
            trees, leaves = (int(n) for n in size.split("x"))
            return "lightgbm", {"n_estimators": trees, "num_leaves": leaves, "min_child_samples": 5}
        if size and kind == "mlp":
            units, marked, epochs = size.partition("e")
            return "mlp", {"hidden": [int(n) for n in units.split("x")], **({"epochs": int(epochs)} if marked else {})}
        return REGRESSORS[name]
    except (KeyError, ValueError):
        raise SystemExit(f"--regressors: unknown {name!r}; allowed: {', '.join(REGRESSORS)}, best_first-<leaves>, "
                         f"lightgbm-<trees>x<leaves>, mlp-<units>[x<units>...][e<epochs>], exact") from None


def model_bytes(solver) -> int:
    """Bytes of the numbers the fitted regressors predict with, 8 bytes each: a tree's leaf values and its
    inner nodes' features and thresholds (3 x leaves - 2 per tree), an MLP's weights and biases (anything
    else: its size, one number per unit)."""
    from rcfr.regressors import BestFirstTree, size
    total = 0
    for model in solver.regressors:
        if hasattr(model, "booster_"):
            numbers = 3 * size(model) - 2 * model.booster_.num_trees()
        elif isinstance(model, BestFirstTree):
            numbers = 3 * size(model) - 2
        else:
            numbers = size(model)
        total += 8 * numbers
    return total


def solver_bytes(solver) -> int:
    """Bytes of the lean solver's own arrays (sampler state, stored sums or reservoirs, the latest training
    sets, the visited profile's marks), as `bench_large_rcfr` counts them; the game and the models apart."""
    from benchmarks.speed.large_rcfr import _nbytes
    state = [tuple(solver.buffers.state), tuple(solver.buffers.scratch), solver.fits,
             [vars(solver._data(p)) for p in (0, 1)]]
    if solver.visited is not None:
        v = solver.visited
        state += [v.fresh, v.listed, v.stack, v.below]
    return _nbytes(state)


def diagnose(solver, log, context: dict):
    """Wrap the solver's fits: after each, one JSON line with the weighted variance of the targets, the
    weighted squared error of the fit on them, the same two for their positive parts (what regret
    matching reads), the share of rows where fit and target disagree on the sign, and for reservoir
    targets the mean sampling variance of the pooled targets (each sequence's sample variance over its
    count). Returns a dict whose "seconds" is the CPU time spent here."""
    from rcfr.regressors import base as regressors
    spent = {"seconds": 0.0}
    train = solver._train

    def traced(player):
        train(player)
        start = time.process_time()
        fit = solver.fits[player]
        n, t = (int(c) for c in fit["count"])
        y, w = fit["value"][:n], fit["weight"][:n]
        prediction = regressors.predict(solver.regressors[player], solver.rows(fit["sequence"][:n] + solver.offsets[player]))
        mean = np.average(y, weights=w)
        row = dict(context, player=player, t=t, rows=n, nodes_touched=int(solver.nodes_touched),
                   target_var=float(np.average((y - mean) ** 2, weights=w)),
                   fit_mse=float(np.average((prediction - y) ** 2, weights=w)),
                   positive_mse=float(np.average((np.maximum(prediction, 0) - np.maximum(y, 0)) ** 2, weights=w)),
                   positive_var=float(np.average((np.maximum(y, 0) - np.average(np.maximum(y, 0), weights=w)) ** 2,
                                                 weights=w)),
                   sign_disagree=float(np.average((prediction > 0) != (y > 0), weights=w)),
                   positive_targets=float(np.average(y > 0, weights=w)))
        if solver.targets == "reservoir":
            row["noise_var"] = _pooled_noise(*solver.reservoirs[player].examples(), solver.buffer_power)
        log.write(json.dumps(row) + "\n")
        log.flush()
        spent["seconds"] += time.process_time() - start

    solver._train = traced
    return spent


def _pooled_noise(sequence, regret, iteration, power) -> float:
    """The mean over sequences (weighted as the fit weights them) of the sampling variance of a pooled
    reservoir target: one noise variance for all samples (the weighted within-sequence variance, pooled
    over the sequences with several samples, unbiased) over each sequence's effective sample count. A
    sequence sampled once has noise too; its own spread cannot show it, the pooled variance does."""
    w = iteration.astype(np.float64) ** power
    sequences, inverse = np.unique(sequence, return_inverse=True)
    totals = np.bincount(inverse, w)
    squares = np.bincount(inverse, w ** 2)
    mean = np.bincount(inverse, w * regret) / totals
    spread = np.bincount(inverse, w * (regret - mean[inverse]) ** 2)
    dof = totals - squares / totals  # the weighted form of n - 1
    several = dof > 1e-12 * totals
    if not several.any():
        return float("nan")
    noise = spread[several].sum() / dof[several].sum()
    return float(np.average(noise * squares / totals ** 2, weights=totals))


def arms(solvers, samplers, targets, regressors, lean=None, pairs=None):
    """Every combination (or every given (solver, targets) pair with every sampler and regressor); `lean` =
    (capacity, selections) for the on-demand path, None for the dense one."""
    combos = [(s, m, t, r) for (s, t), m, r in itertools.product(pairs, samplers, regressors)] if pairs else \
        itertools.product(solvers, samplers, targets, regressors)
    for selection in (lean[1] if lean else [None]):
        for arm in combos:
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


def run(game, game_name, features, arm, seed, max_nodes, schedule=None, log=None):
    """One seeded run to `max_nodes` nodes touched; CPU seconds exclude compilation (a throwaway solver
    runs one iteration first) and the diagnostics. `schedule` = (traversals, refit_every) overrides."""
    build(game, features, arm, seed, schedule).run(1)
    solver, method = build(game, features, arm, seed, schedule), method_name(arm)
    lean = arm["regressor"] != "table" and "selection" in arm
    spent = diagnose(solver, log, dict(method=method, seed=seed)) if log is not None and lean else {"seconds": 0.0}
    start = time.process_time()
    while solver.nodes_touched < max_nodes:
        solver.run(1)
    seconds = time.process_time() - start - spent["seconds"]
    size = solver.size() if arm["regressor"] != "table" else game.num_sequences
    arm = {k: arm[k] for k in ("solver", "sampler", "targets", "regressor")}
    return dict(game=game_name, method=method, **arm, seed=seed, iterations=solver.iteration,
                nodes_touched=solver.nodes_touched, size=size, size_pct=round(100 * size / game.num_sequences, 3),
                seconds=round(seconds, 2), exploitability=rcfr.exploitability(game, solver.average_policy()),
                traversals=getattr(solver, "traversals", ""), refit_every=getattr(solver, "refit_every", ""),
                model_bytes=model_bytes(solver) if lean else "", solver_bytes=solver_bytes(solver) if lean else "",
                peak_mib=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))


def build(game, features, arm, seed, schedule=None):
    if arm["regressor"] == "table":
        solver = rcfr.make_solver(arm["solver"], game, seed=seed)
    else:
        name, params = regressor_spec(arm["regressor"])
        lean = {}
        if "selection" in arm:
            lean = {"features_on_demand": True, "selection": arm["selection"]}
            if arm["capacity"]:
                lean["capacity"] = arm["capacity"]
        traversals, refit_every = schedule or (None, None)
        if refit_every:
            lean["refit_every"] = refit_every
        solver = rcfr.make_solver(arm["solver"], game, sampler=arm["sampler"], targets=arm["targets"],
                                  regressor=make_regressor(name, **params), features=features,
                                  traversals=traversals or TRAVERSALS[arm["sampler"]], seed=seed, **lean)
    return solver


def table(rows):
    """Seeds pooled per (game, method): mean, 95% t-interval; the byte columns where the rows have them."""
    groups = {}
    for r in rows:
        groups.setdefault((r["game"], r["method"]), []).append(r)
    lines = ["| game | method | seeds | size (% of sequences) | nodes touched | CPU s | exploitability | 95% CI "
             "| model KiB | solver MiB |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for (game, method), members in sorted(groups.items(), key=lambda kv: (kv[0][0], np.mean(
            [float(m["exploitability"]) for m in kv[1]]))):
        values = np.array([float(m["exploitability"]) for m in members])
        half = stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else np.nan
        model = [float(m["model_bytes"]) for m in members if m.get("model_bytes") not in (None, "")]
        arrays = [float(m["solver_bytes"]) for m in members if m.get("solver_bytes") not in (None, "")]
        lines.append(f"| {game} | {method} | {len(values)} | {np.mean([float(m['size_pct']) for m in members]):.3g} | "
                     f"{np.mean([float(m['nodes_touched']) for m in members]):.3g} | "
                     f"{np.mean([float(m['seconds']) for m in members]):.1f} | {values.mean():.4f} | ±{half:.4f} | "
                     f"{np.mean(model) / 1024 if model else float('nan'):.1f} | "
                     f"{np.mean(arrays) / 2 ** 20 if arrays else float('nan'):.1f} |")
    return "\n".join(lines)


def paired(rows, base: str) -> str:
    """Each method's exploitability minus `base`'s on the same game and seed: mean and 95% t-interval over
    the seeds both ran (a paired comparison: the seeds' shared luck cancels)."""
    runs = {}
    for r in rows:
        runs.setdefault((r["game"], r["method"]), {})[int(r["seed"])] = float(r["exploitability"])
    lines = [f"| game | method | seeds | minus {base} | 95% CI |", "|---|---|---|---|---|"]
    for (game, method), by_seed in sorted(runs.items()):
        reference = runs.get((game, base))
        if reference is None or method == base:
            continue
        diff = np.array([by_seed[s] - reference[s] for s in sorted(by_seed) if s in reference])
        half = stats.t.ppf(0.975, len(diff) - 1) * diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else np.nan
        lines.append(f"| {game} | {method} | {len(diff)} | {diff.mean():+.4f} | ±{half:.4f} |")
    return "\n".join(lines)


def fit_table(path) -> str:
    """The diagnostics of `--diagnose`, per method: refits per player and seed, and means over every fit of
    every seed of the fit's unexplained share of its targets' variance (regression error / target
    variance), the same on the positive parts, the sign disagreement, and for reservoir targets the share
    of the target variance that is sampling noise."""
    groups = {}
    for line in open(path):
        r = json.loads(line)
        groups.setdefault(r["method"], []).append(r)
    lines = ["| method | refits per player | rows per fit | regression error / target variance | on positive parts "
             "| sign disagreement | sampling noise / target variance |", "|---|---|---|---|---|---|---|"]
    for method, fits in sorted(groups.items()):
        runs = len({(f["seed"], f["player"]) for f in fits})

        def mean(key, over):
            values = [f[key] / f[over] for f in fits if f.get(key) is not None and f[over] > 0]
            return f"{np.nanmean(values):.3f}" if values else "-"
        lines.append(f"| {method} | {len(fits) / runs:.1f} | {np.mean([f['rows'] for f in fits]):,.0f} | "
                     f"{mean('fit_mse', 'target_var')} | {mean('positive_mse', 'positive_var')} | "
                     f"{np.mean([f['sign_disagree'] for f in fits]):.3f} | {mean('noise_var', 'target_var')} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", default="goofspiel(cards=5)")
    parser.add_argument("--features", default="goofspiel")
    parser.add_argument("--nodes", type=float, default=2e7, help="nodes touched per run")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--seed-start", type=int, default=0, help="first seed (held-out seeds for diagnostics)")
    parser.add_argument("--regressors", nargs="+", default=list(REGRESSORS),
                        help=f"{', '.join(REGRESSORS)} or best_first-<leaves>")
    parser.add_argument("--solvers", nargs="+", default=["sampled-rcfr", "sampled-rcfr+"])
    parser.add_argument("--samplers", nargs="+", default=["external", "outcome"])
    parser.add_argument("--targets", nargs="+", default=["stored", "bootstrap"])
    parser.add_argument("--on-demand", action="store_true", help="the lean path (features_on_demand=True)")
    parser.add_argument("--capacity", type=int, default=0, help="on-demand: sequences per fit (0: the default)")
    parser.add_argument("--selections", nargs="+", default=["recent"], help="on-demand: recent and/or uniform")
    parser.add_argument("--quick", action="store_true", help="1e6 nodes, 2 seeds, best-first trees only")
    parser.add_argument("--pairs", nargs="+", default=None, metavar="SOLVER:TARGETS",
                        help="run these (solver, targets) pairs instead of --solvers x --targets")
    parser.add_argument("--traversals", type=int, default=0, help="traversals per iteration (0: per sampler)")
    parser.add_argument("--refit-every", type=int, default=0, help="iterations between refits (0: the solver's)")
    parser.add_argument("--no-tabular", action="store_true", help="skip the tabular ES/OS rows")
    parser.add_argument("--diagnose", default=None, help="write one JSON line per fit to this file (and print "
                        "their summary at the end)")
    parser.add_argument("--paired", default=None, metavar="METHOD",
                        help="also print every method minus this one, paired by seed")
    parser.add_argument("--out", default="rcfr_sampler_study.csv")
    args = parser.parse_args()
    pairs = None
    if args.pairs:
        pairs = [tuple(p.split(":")) for p in args.pairs]
        if any(len(p) != 2 for p in pairs):
            raise SystemExit(f"--pairs: write SOLVER:TARGETS, e.g. sampled-rcfr+:stored; got {args.pairs}")
    schedule = (args.traversals, args.refit_every)
    log = open(args.diagnose, "a") if args.diagnose else None
    if args.quick:
        args.nodes, args.seeds, args.regressors = 1e6, 2, ["best_first"]
    name, params = parse(args.game)
    game = rcfr.load_game(name, **params)
    out = Path(args.out)
    rows = list(csv.DictReader(out.open())) if out.exists() else []
    done = {(r["game"], r["method"], int(r["seed"])) for r in rows}
    lean = (args.capacity, args.selections) if args.on_demand else None
    for arm in arms(args.solvers, args.samplers, args.targets, args.regressors, lean, pairs):
        if args.no_tabular and arm["regressor"] == "table":
            continue
        for seed in range(args.seed_start, args.seed_start + args.seeds):
            method = method_name(arm)
            if (args.game, method, seed) in done:
                continue
            row = run(game, args.game, args.features, arm, seed, args.nodes, schedule, log)
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
    if args.paired:
        print(paired(rows, args.paired))
    if log is not None:
        log.close()
        print(fit_table(args.diagnose))


if __name__ == "__main__":
    main()
