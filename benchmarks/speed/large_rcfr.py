"""Sampled RCFR with features on demand on a large game: peak memory and seconds per iteration vs tabular ES.

    nice -n 10 python -m benchmarks.speed.large_rcfr                           # goofspiel(cards=7)
    nice -n 10 python -m benchmarks.speed.large_rcfr --game "goofspiel(cards=5)" --iterations 50   # a minute
    nice -n 10 python -m benchmarks.speed.large_rcfr --dense                   # also the dense-matrix path at 1%
    nice -n 10 python -m benchmarks.speed.large_rcfr --plus --shares 0.01      # lean RCFR+ with stored targets
    nice -n 10 python -m benchmarks.speed.large_rcfr --profiles cache visited --no-tabular   # both profile forms

Each solver runs in a fresh subprocess on the cached compiled game (compile it once beforehand; the
cache is $RCFR_CACHE), so its peak resident set (``ru_maxrss``) is its own. Columns: the solver and model
size (best-first leaves as a share of the game's sequences), reservoir capacity; peak MiB of the whole
process, and its growth over the process after loading the game (``solve MiB``); what the solver's parts
hold (MiB; virtual sizes of arrays, of which only the touched pages are resident): ``scratch`` (the
sampler's per-history tree-walk arrays), ``state`` (profile, average sums, regrets or sampled-regret sums,
per-infoset stamps), ``model`` (fitted arrays and the fit's cached sort orders), ``buffer`` (the
reservoirs, or the stored sums of ``--plus``), ``rows`` (training rows of the last fit plus one prediction chunk), ``views`` (sequence-form
payoff matrices, built by the tabular and dense solvers only); CPU seconds per iteration measured after a
warm-up, and the shares of it spent fitting and refreshing the profile cache (the rest samples); with
``profile="visited"`` the refresh share is the time in the discovery walks and their batched predictions;
histories visited and sampled regrets written (sequences, into the reservoirs or sums) per iteration;
information sets predicted per iteration (all of a player's at each of its refits for the cache) and
prediction batches per iteration (visited); CPU microseconds per sequence of a profile refresh (encoder
replay + rows + predict + regret matching; cache only). CPU seconds of a single-threaded process: on a
shared machine wall time is longer.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


from benchmarks.speed.large_games import parse  # noqa: E402

MIB = 2 ** 20


def _nbytes(*objects) -> int:
    """Summed nbytes of the arrays in these objects (arrays, tuples, dicts, objects' attributes)."""
    import numpy as np
    seen, total, stack = set(), 0, list(objects)
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if isinstance(o, np.ndarray):
            total += o.nbytes if o.base is None else 0  # views are counted where they are owned
        elif isinstance(o, (tuple, list)):
            stack.extend(o)
        elif isinstance(o, dict):
            stack.extend(o.values())
    return total


def _model_bytes(model) -> int:
    return _nbytes(*[v for k, v in vars(model).items() if k != "_fitted_on"])


def measure(spec: str, config: dict, iterations: int, warmup: int, tiny: str) -> dict:
    """One solver on one game, in this process (called in a subprocess by `main`)."""
    import resource

    import rcfr

    name, params = parse(spec)
    warm = rcfr.load_game(*parse(tiny)[:1], **parse(tiny)[1])  # numba loads its kernels before we measure
    rcfr.make_solver(config["solver"], warm, **_options(config, warm)).run(3)
    game = rcfr.load_game(name, **params)
    loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    options = _options(config, game)
    solver = rcfr.make_solver(config["solver"], game, **options)
    lean = getattr(solver, "on_demand", None)
    spent = {"_train": 0.0, "_refresh": 0.0, "refreshed": 0, "sets": 0, "prepare": 0.0}
    visited = getattr(lean, "visited", None)
    if lean is not None:  # time the refits (fit, then profile refresh) apart from sampling
        sequences = [int(sizes.sum()) for _, sizes in lean.sets]
        lean._train = _timed(lean._train, spent, "_train", [0, 0])
        if visited is None:
            lean._refresh = _timed(lean._refresh, spent, "_refresh", sequences, [len(sizes) for _, sizes in lean.sets])
        else:  # the discovery walks and their predictions, before each traversal
            prepare = visited.prepare

            def timed_prepare(traverser, rng):
                start = time.process_time()
                prepare(traverser, rng)
                spent["prepare"] += time.process_time() - start
            visited.prepare = timed_prepare
        for p in (0, 1):  # count the sampled regrets written into the reservoirs or sums
            data = lean._data(p)
            data.add = _counted(data.add, spent)
    solver.run(warmup)  # compiles, and faults the scratch pages in
    spent.update({"_train": 0.0, "_refresh": 0.0, "refreshed": 0, "sets": 0, "prepare": 0.0, "written": 0})
    batches = (visited.rounds, visited.predicted) if visited is not None else (0, 0)
    start, nodes = time.process_time(), solver.nodes_touched
    solver.run(iterations)
    seconds = time.process_time() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    leaves = options["regressor"]["max_leaves"] if "regressor" in options else None
    row = {"game": spec, "solver": config["label"], "profile": options.get("profile", "cache") if lean else None,
           "leaves": leaves, "refit_every": options.get("refit_every"), "share": config.get("share"),
           "capacity": options.get("capacity"), "peak_mib": peak / MIB, "solve_mib": (peak - loaded) / MIB,
           "game_mib": game.nbytes() / MIB, "ms_per_iteration": 1000 * seconds / iterations,
           "fit_share": (spent["_train"] - spent["_refresh"]) / seconds if lean is not None else None,
           "refresh_share": (spent["_refresh"] + spent["prepare"]) / seconds if lean is not None else None,
           "nodes_per_iteration": (solver.nodes_touched - nodes) / iterations, "size": solver.size(),
           "written_per_iteration": spent["written"] / iterations if lean else None,
           "refresh_us_per_sequence": None, "predicted_per_iteration": None, "batches_per_iteration": None}
    if visited is not None:
        row["batches_per_iteration"] = (visited.rounds - batches[0]) / iterations
        row["predicted_per_iteration"] = (visited.predicted - batches[1]) / iterations
    elif lean is not None:
        row["predicted_per_iteration"] = spent["sets"] / iterations
    buffers = lean.buffers if lean is not None else getattr(solver, "buffers", None) or solver.sampler.buffers
    row["scratch_mib"] = _nbytes(tuple(buffers.scratch)) / MIB
    state = [tuple(buffers.state)]
    if lean is not None:
        state += [lean._sums, lean._listed, lean._listed_stamp]
        if visited is not None:
            state += [visited.fresh, visited.listed, visited.stack, visited.below]
        row["model_mib"] = sum(_model_bytes(m) for m in lean.regressors) / MIB
        row["buffer_mib"] = _nbytes([vars(lean._data(p)) for p in (0, 1)]) / MIB
        chunk = min(lean.chunk + max(int(sizes.max()) for _, sizes in lean.sets),  # whole sets per chunk
                    max(int(sizes.sum()) for _, sizes in lean.sets))
        row["rows_mib"] = max(max(int(f["count"][0]) for f in lean.fits), chunk) * lean.encoder.num_features * 8 / MIB
        if visited is None:
            row["refresh_us_per_sequence"] = 1e6 * spent["_refresh"] / max(spent["refreshed"], 1)
        row["views_mib"] = 0.0
    else:
        row["views_mib"] = sum(_nbytes([vars(v.payoff), vars(v)]) for v in game.views) / MIB
        store = getattr(solver, "store", None)
        if store is not None and hasattr(store, "regressors"):  # dense sampled RCFR
            state += [vars(b) for b in store.blocks] + [store._estimates, store._strategies, solver.average,
                                                         solver._profile]
            row["model_mib"] = sum(_model_bytes(m) for m in store.regressors) / MIB
            row["buffer_mib"] = _nbytes([vars(b.buffer) for b in store.blocks if hasattr(b, "buffer")]) / MIB
            row["rows_mib"] = store.features.matrix.nbytes / MIB
        else:
            row["model_mib"] = row["buffer_mib"] = row["rows_mib"] = 0.0
    row["state_mib"] = _nbytes(state) / MIB
    return row


def _timed(method, spent: dict, key: str, sequences: list[int], sets=(0, 0)):
    """`method(player)`, its CPU seconds added to spent[key], sequences[player] to spent["refreshed"] and
    sets[player] to spent["sets"]."""
    def timed(player):
        start = time.process_time()
        method(player)
        spent[key] += time.process_time() - start
        spent["refreshed"] += sequences[player]
        spent["sets"] += sets[player]
    return timed


def _counted(add, spent: dict):
    """`add(sequences, values, t)`, the number of sequences added to spent["written"]."""
    def counted(sequences, values, t):
        spent["written"] = spent.get("written", 0) + len(sequences)
        add(sequences, values, t)
    return counted


def _options(config: dict, game) -> dict:
    """The solver's options; a model size given as a share of the game's sequences becomes best-first leaves
    and a reservoir of `capacity_per_leaf` examples a leaf (at least `min_capacity`)."""
    options = dict(config["options"])
    if "share" in config:
        leaves = max(2, round(config["share"] * game.num_sequences))
        options["regressor"] = {"name": "best_first", "max_leaves": leaves}
        options["capacity"] = max(config["capacity_per_leaf"] * leaves, config["min_capacity"])
    return options


def configs(dense: bool, shares, sampler: str, refit_every: int, traversals: int, features: str,
            profiles=("cache",), tabular: bool = True, plus: bool = False):
    lean = {"sampler": sampler, "features": features, "targets": "reservoir", "traversals": traversals,
            "refit_every": refit_every, "features_on_demand": True}
    if tabular:
        yield {"label": "es-mccfr", "solver": "es-mccfr", "options": {"seed": 0}}
    for share in shares:
        for profile in profiles:
            if plus:  # stored Q-regret sums, fits of at most `capacity` sequences
                yield {"label": "sampled-rcfr+ on demand, stored", "solver": "sampled-rcfr+", "share": share,
                       "capacity_per_leaf": 4, "min_capacity": 100_000,
                       "options": {**lean, "targets": "stored", "seed": 0, "profile": profile}}
            else:
                yield {"label": "sampled-rcfr on demand", "solver": "sampled-rcfr", "share": share,
                       "capacity_per_leaf": 4, "min_capacity": 100_000, "options": {**lean, "seed": 0, "profile": profile}}
    if dense:
        options = {k: v for k, v in lean.items() if k != "features_on_demand"}
        yield {"label": "sampled-rcfr dense", "solver": "sampled-rcfr", "share": 0.01, "capacity_per_leaf": 4,
               "min_capacity": 100_000, "options": {**options, "seed": 0}}


COLUMNS = [("solver", "{}"), ("profile", "{}"), ("refit_every", "{}"), ("share", "{}"), ("leaves", "{}"),
           ("capacity", "{}"), ("peak_mib", "{:,.0f}"),
           ("solve_mib", "{:,.0f}"), ("game_mib", "{:,.0f}"), ("scratch_mib", "{:,.0f}"), ("state_mib", "{:,.1f}"),
           ("model_mib", "{:,.2f}"), ("buffer_mib", "{:,.1f}"), ("rows_mib", "{:,.1f}"), ("views_mib", "{:,.0f}"),
           ("ms_per_iteration", "{:.2f}"), ("fit_share", "{:.2f}"), ("refresh_share", "{:.2f}"), ("nodes_per_iteration", "{:,.0f}"),
           ("written_per_iteration", "{:,.0f}"), ("predicted_per_iteration", "{:,.0f}"),
           ("batches_per_iteration", "{:,.1f}"), ("refresh_us_per_sequence", "{:.2f}")]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="goofspiel(cards=7)")
    parser.add_argument("--shares", nargs="+", type=float, default=[0.001, 0.01, 0.1],
                        help="best-first leaves as a share of the game's sequences")
    parser.add_argument("--sampler", default="external", choices=["external", "outcome", "probing"])
    parser.add_argument("--features", default="goofspiel", help="an encoder of the game")
    parser.add_argument("--tiny", default="goofspiel(cards=3)",
                        help="a small game of the same features, run first so JIT memory is not measured")
    parser.add_argument("--traversals", type=int, default=1)
    parser.add_argument("--refit-every", type=int, default=100)
    parser.add_argument("--iterations", type=int, default=200, help="measured iterations (after the warm-up)")
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--dense", action="store_true", help="also run the dense-matrix sampled RCFR at 1%%")
    parser.add_argument("--plus", action="store_true",
                        help="lean RCFR+ with stored targets (sampled-rcfr+) instead of RCFR with a reservoir")
    parser.add_argument("--profiles", nargs="+", default=["cache"], choices=["cache", "visited"],
                        help="the on-demand solver's current strategies: refreshed after each refit, or predicted "
                             "for the visited information sets")
    parser.add_argument("--no-tabular", action="store_true", help="skip the tabular ES row")
    parser.add_argument("--json", default=None, help="also write the rows here")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure(args.game, json.loads(args.one), args.iterations, args.warmup, args.tiny)))
        return
    print(f"{args.game}: {args.sampler} sampling, {args.traversals} traversal(s) per iteration, refit every "
          f"{args.refit_every}, {args.iterations} iterations after {args.warmup} of warm-up")
    print("| " + " | ".join(c for c, _ in COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS))
    rows = []
    for config in configs(args.dense, args.shares, args.sampler, args.refit_every, args.traversals, args.features,
                          args.profiles, not args.no_tabular, args.plus):
        done = subprocess.run([sys.executable, "-m", __spec__.name, "--one", json.dumps(config), "--game", args.game,
                               "--iterations", str(args.iterations), "--warmup", str(args.warmup),
                               "--tiny", args.tiny],
                              capture_output=True, text=True)
        if done.returncode:
            print(f"| {config['label']} | failed: {done.stderr.strip().splitlines()[-1] if done.stderr else done.returncode} |")
            continue
        row = json.loads(done.stdout.strip().splitlines()[-1])
        rows.append(row)
        print("| " + " | ".join("-" if row[c] is None else f.format(row[c]) for c, f in COLUMNS) + " |", flush=True)
    if args.json:
        from rcfr.files import write_json
        write_json(args.json, rows)


if __name__ == "__main__":
    main()
