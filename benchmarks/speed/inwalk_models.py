"""What an iteration costs with the models evaluated inside the walk (``profile="model"``) against the visited
profile and plain external sampling, on Bluff walked by its rules; and what each keeps.

    python -m benchmarks.speed.inwalk_models                       # Bluff(2,1), 200 + 200 iterations
    python -m benchmarks.speed.inwalk_models --dice 2 2 --warmup 300 --iterations 300
    python -m benchmarks.speed.inwalk_models --game leduc --leaves 256 --warmup 100 --iterations 400  # compiled
    python -m benchmarks.speed.inwalk_models --bounded 4              # + the bounded state (RCFR: rows, snapshots)
    python -m benchmarks.speed.inwalk_models --set-free 4 --dice 2 2  # no set numbered, against both ES walks

Lean sampled RCFR+ (best-first trees of `--leaves` leaves, stored targets, external sampling, a refit every
`--refit-every` iterations) runs `--warmup` iterations, then `--iterations` more are timed (process CPU seconds),
once with ``profile="model"`` and once with ``profile="visited"`` (and ``"cache"`` on compiled Leduc, `--game
leduc`); ES-MCCFR on the same game likewise. Printed per
solver: ms per timed iteration, of which in refits (a fit, then the model's compile or the profile's marking of
stale sets), histories touched per iteration, sets met and `state_bytes()` after the warmup and at the end.

``--bounded K`` adds lean sampled RCFR (regret matching: the row reservoir has no RCFR+ form) with
``profile="model"``, ``targets="rows"`` (`capacity` feature rows a player, written by the walk) and
``average="mixture"`` with ``snapshots=K``, beside the same RCFR with ``targets="reservoir"`` and the average
sums, and lean sampled RCFR+ with ``targets="bootstrap"`` (the walk's rows, bootstrapped and clipped) and snapshots.

``--set-free K`` runs the bounded solvers alone, which on the rules number no information set (`SetFreeRules`:
``set_index`` None), the RCFR one also with ``set_index=True`` (its arrays per set met), against ES-MCCFR on the
public tree (the rules' default walk) and its general walk (``walk="general"``); `uptime`'s load averages are
printed before and after, the machine being shared.
"""

from __future__ import annotations

import argparse
import os
import time

import rcfr
from rcfr.solvers import SampledRCFR, SampledRCFRPlus, make_solver


def timed(solver, warmup: int, iterations: int) -> tuple[float, float, float]:
    """(CPU ms, of which in fits, histories touched) per iteration over `iterations` after `warmup`."""
    solver.run(warmup)
    fits = [0.0]
    for name in ("_train", "_fit_rows"):  # the refits (fit, then the model's compile or the profile's refresh)
        train = getattr(solver, name, None)
        if train is not None:
            def timed_train(*args, train=train):
                begin = time.process_time()
                train(*args)
                fits[0] += time.process_time() - begin
            setattr(solver, name, timed_train)
    nodes, start = solver.nodes_touched, time.process_time()
    solver.run(iterations)
    seconds = time.process_time() - start
    return 1e3 * seconds / iterations, 1e3 * fits[0] / iterations, (solver.nodes_touched - nodes) / iterations


def sets_met(solver) -> int:
    """The information sets met (on the rules), or the game's (compiled)."""
    buffers = getattr(solver, "buffers", None)
    if getattr(solver, "numbered", True) is False:
        return "none numbered"
    if buffers is None or not hasattr(buffers, "num_sets"):
        sets = getattr(solver.game, "num_infosets", None)  # compiled; the public tree's walk has no count here
        return "—" if sets is None else f"{sets:,}"
    return f"{buffers.num_sets:,}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=("bluff", "leduc"), default="bluff")
    parser.add_argument("--dice", type=int, nargs=2, default=(2, 1))
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--refit-every", type=int, default=50)
    parser.add_argument("--leaves", type=int, default=1024)
    parser.add_argument("--bounded", type=int, default=0, metavar="K",
                        help="add the bounded state (targets='rows', average='mixture', snapshots=K)")
    parser.add_argument("--only-bounded", action="store_true", help="skip the RCFR+ and ES rows")
    parser.add_argument("--set-free", type=int, default=0, metavar="K",
                        help="the bounded solvers with no set numbered (snapshots=K) against both ES walks")
    parser.add_argument("--capacity", type=int, default=100_000)
    args = parser.parse_args()
    if args.game == "leduc":
        game, features, profiles, title = rcfr.load_game("leduc"), "poker", ("model", "visited", "cache"), "Leduc"
    else:
        game = rcfr.load_game("liars_dice", dice1=args.dice[0], dice2=args.dice[1], compiled=False)
        features, profiles, title = "liars_dice", ("model", "visited"), f"Bluff{tuple(args.dice)} walked by its rules"
    lean = dict(features_on_demand=True, features=features, sampler="external", targets="stored",
                regressor={"name": "best_first", "max_leaves": args.leaves}, capacity=args.capacity,
                refit_every=args.refit_every, seed=0)
    quiet = args.only_bounded or args.set_free
    solvers = {} if quiet else {f"sampled-rcfr+ profile={p}": SampledRCFRPlus(game, profile=p, **lean)
                                            for p in profiles}
    if args.bounded:
        rcfr_ = {**lean, "profile": "model"}
        solvers["sampled-rcfr profile=model targets=reservoir"] = SampledRCFR(game, **{**rcfr_, "targets": "reservoir"})
        solvers[f"sampled-rcfr profile=model targets=rows snapshots={args.bounded}"] = SampledRCFR(
            game, **{**rcfr_, "targets": "rows", "average": "mixture", "snapshots": args.bounded})
        solvers[f"sampled-rcfr+ profile=model targets=bootstrap snapshots={args.bounded}"] = SampledRCFRPlus(
            game, **{**rcfr_, "targets": "bootstrap", "average": "mixture", "snapshots": args.bounded})
    if args.set_free:
        free = {**lean, "profile": "model", "targets": "rows", "average": "mixture", "snapshots": args.set_free}
        solvers[f"sampled-rcfr targets=rows snapshots={args.set_free}, no set index"] = SampledRCFR(game, **free)
        solvers[f"sampled-rcfr+ targets=bootstrap snapshots={args.set_free}, no set index"] = SampledRCFRPlus(
            game, **{**free, "targets": "bootstrap"})
        solvers[f"sampled-rcfr targets=rows snapshots={args.set_free}, set_index=True"] = SampledRCFR(
            game, **free, set_index=True)
        solvers["es-mccfr (public tree)"] = make_solver("es-mccfr", game, seed=0)
        if args.game == "bluff":
            solvers["es-mccfr walk=general"] = make_solver("es-mccfr", game, seed=0, walk="general")
    elif not args.only_bounded:
        solvers["es-mccfr"] = make_solver("es-mccfr", game, seed=0)
    print(f"{title}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"load averages {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the start")
    print("| solver | ms / iteration | of which refits | without refits | histories / iteration | sets met | "
          "state bytes after the warmup | at the end |")
    print("|---|---|---|---|---|---|---|---|")
    for name, solver in solvers.items():
        before = []
        run = solver.run
        solver.run = lambda n, run=run, before=before: (run(n), before.append(solver.state_bytes()))[0]
        ms, fits, nodes = timed(solver, args.warmup, args.iterations)
        print(f"| {name} | {ms:.2f} | {fits:.2f} | {ms - fits:.2f} | {nodes:,.0f} | {sets_met(solver)} | "
              f"{before[0]:,} | {solver.state_bytes():,} |", flush=True)
    print(f"load averages {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")


if __name__ == "__main__":
    main()
