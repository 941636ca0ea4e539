"""Sharded sampled solvers (issue 36, item 2): one process against `--workers` shards at equal nodes touched.

    python -m benchmarks.speed.distributed_sampled                       # SD-CFR, DREAM on Leduc; RCFR+ Goofspiel(5)
    python -m benchmarks.speed.distributed_sampled --nodes 2e6 --seeds 5 --ray
    python -m benchmarks.speed.distributed_sampled --methods --cards 0 --lean-cards 7 --nodes 3e7 --ray  # lean, rules
    python -m benchmarks.speed.distributed_sampled --methods --cards 0 --bounded-dice 2 1 --nodes 2e7 --ray  # bounded

Per solver and seed, two runs to the same node budget (iterations until `nodes_touched` reaches `--nodes`):
the one-process run, and each batch split into ``shards=workers`` tasks with their own streams
(`NeuralCFR.distribute`, `rcfr.solvers.distributed_sampled.distribute`). Shards run here one after another
unless `--ray`, which runs them on `--workers` local Ray workers (the same numbers bit for bit:
tests/test_distributed_sampled.py; only the wall time differs). Exploitability of the average policy at the
end, mean and 95% interval over the seeds (`rcfr.stats.ci95`, Student's t), nodes touched, iterations, and
wall seconds per run. `--lean-cards N` adds lean sampled RCFR+ (``features_on_demand=True``, the visited profile)
on Goofspiel(N) walked by its rules, its batches sharded through the lean seam (`rcfr.solvers.lean_rules`), its
average policy evaluated exactly on the rules (`rcfr.evaluation.rules.exploitability`, unmet sets uniform).
`--bounded-dice D1 D2` adds the bounded form on Bluff(D1, D2) walked by its rules: the 16 MiB arm of the
equal-memory preset (`configs/arm/bluff22_equal_memory/rcfr+-trees-16mib.yaml`: trees of 256 leaves in the walks,
bootstrapped rows in a window of 12,000, the mixture of 4 snapshots, nothing numbered) with 2 traversals an
iteration and a refit every 100 (the arm's 200 traversals a refit; a batch of one cannot be split), its mixture
evaluated exactly on the public tree. The
question is whether splitting a batch into shards with other streams changes
the quality at equal work: the sharded mean should fall within the one-process interval. The load average
before and after is printed: the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import time

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

TREES = {"name": "best_first", "max_leaves": 256}
LEAN = "lean sampled-rcfr+"  # SampledRCFRPlus(features_on_demand=True) on the rules, default regressor


def _solver(name: str, game, seed: int, traversals: int | None):
    import rcfr
    if name == "sampled-rcfr+":
        return rcfr.make_solver(name, game, traversals=traversals or 100, seed=seed)
    extra = {} if traversals is None else {"traversals": traversals}
    return rcfr.make_solver(name, game, regressor=TREES, seed=seed, **extra)


def _lean(game, seed: int, traversals: int | None):
    from rcfr.solvers import SampledRCFRPlus
    return SampledRCFRPlus(game, features_on_demand=True, features="goofspiel", traversals=traversals or 100, seed=seed)


BOUNDED = "bounded sampled-rcfr+"  # the 16 MiB equal-memory arm's options, 2 traversals an iteration


def _bounded(game, seed: int, traversals: int | None):
    from rcfr.solvers import SampledRCFRPlus
    return SampledRCFRPlus(game, features_on_demand=True, features="liars_dice", profile="model", targets="bootstrap",
                           average="mixture", snapshots=4, capacity=12000, traversals=traversals or 2,
                           refit_every=200 // (traversals or 2), regressor=TREES, seed=seed)


def _exploitability(name: str, game, policy) -> float:
    import rcfr
    if name == LEAN:
        from rcfr.evaluation import rules as on_rules
        return on_rules.exploitability(game.rules, policy, default="uniform")
    return rcfr.exploitability(game, policy)


def one_run(name: str, game, seed: int, nodes: float, shards: int, ray: bool, traversals: int | None) -> dict:
    from rcfr.solvers.distributed_sampled import distribute
    make = {LEAN: _lean, BOUNDED: _bounded}.get(name)
    solver = make(game, seed, traversals) if make else _solver(name, game, seed, traversals)
    if shards > 1:
        workers = shards if ray else 1
        if name in ("sampled-rcfr+", LEAN, BOUNDED):
            distribute(solver, workers, shards)
        else:
            solver.distribute(workers, shards)
    start = time.perf_counter()
    while solver.nodes_touched < nodes:
        solver.iterate()
    wall = time.perf_counter() - start
    start = time.perf_counter()
    value = _exploitability(name, game, solver.average_policy())
    return {"nodes": solver.nodes_touched, "iterations": solver.iteration, "wall": wall,
            "exploitability": value, "evaluation": time.perf_counter() - start}


def main(argv=None) -> None:
    import numpy as np

    import rcfr
    from rcfr.stats import ci95
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", nargs="*", default=["sd-cfr", "dream"], help="Deep CFR family, on Leduc (none: skip)")
    parser.add_argument("--cards", type=int, default=5, help="Goofspiel cards for sampled RCFR+ (0: skip it)")
    parser.add_argument("--lean-cards", type=int, default=0,
                        help="Goofspiel cards for lean sampled RCFR+ walked by the rules (0: skip it)")
    parser.add_argument("--bounded-dice", type=int, nargs=2, default=None,
                        help="Bluff dice for the bounded form walked by the rules (default: skip it)")
    parser.add_argument("--nodes", type=float, default=1e6, help="node budget per run")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2, help="shards (and Ray workers with --ray)")
    parser.add_argument("--traversals", type=int, default=None, help="per batch (default: each solver's; RCFR+ 100)")
    parser.add_argument("--ray", action="store_true", help="run the shards on a local Ray (wall time; same numbers)")
    args = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()}", flush=True)
    if args.ray:  # start the local Ray and load the kernels in its workers before timing
        kuhn = rcfr.load_game("kuhn")
        start = time.perf_counter()
        one_run("sd-cfr", kuhn, 0, 1, args.workers, True, args.workers)
        if args.lean_cards:  # the rules path's kernels in the workers too
            one_run(LEAN, rcfr.load_game("goofspiel", cards=4, compiled=False), 0, 1, args.workers, True, args.workers)
        if args.bounded_dice:
            one_run(BOUNDED, rcfr.load_game("liars_dice", compiled=False), 0, 1, args.workers, True, args.workers)
        print(f"Ray start and warm-up: {time.perf_counter() - start:.1f} s", flush=True)
    cases = [(m, rcfr.load_game("leduc"), "Leduc") for m in args.methods]
    if args.cards:
        cases.append(("sampled-rcfr+", rcfr.load_game("goofspiel", cards=args.cards), f"Goofspiel({args.cards})"))
    if args.lean_cards:
        cases.append((LEAN, rcfr.load_game("goofspiel", cards=args.lean_cards, compiled=False),
                      f"Goofspiel({args.lean_cards}), rules"))
    if args.bounded_dice:
        d1, d2 = args.bounded_dice
        cases.append((BOUNDED, rcfr.load_game("liars_dice", dice1=d1, dice2=d2, compiled=False), f"Bluff({d1},{d2}), rules"))
    print("| solver | game | shards | where | iterations | nodes touched | exploitability (mean ± 95%) | "
          "wall s per run | evaluation s |\n|---|---|---|---|---|---|---|---|---|")
    for name, game, label in cases:
        for shards in (1, args.workers):
            runs = [one_run(name, game, seed, args.nodes, shards, args.ray, args.traversals)
                    for seed in range(args.seeds)]
            values = [r["exploitability"] for r in runs]
            where = "one process" if shards == 1 else ("Ray" if args.ray else "here")
            print(f"| {name} | {label} | {shards} | {where} | {np.mean([r['iterations'] for r in runs]):.1f} | "
                  f"{np.mean([r['nodes'] for r in runs]):,.0f} | {np.mean(values):.4f} ± {ci95(values) or 0:.4f} | "
                  f"{np.mean([r['wall'] for r in runs]):.1f} | {np.mean([r['evaluation'] for r in runs]):.1f} |",
                  flush=True)
            print(f"  per seed: {[(round(r['exploitability'], 4), r['nodes'], round(r['wall'], 1)) for r in runs]}",
                  flush=True)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
