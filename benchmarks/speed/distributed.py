"""Sharded exact evaluation and CFR iterations on a local Ray (issue 36): one process against `--workers` Ray workers.

    python -m benchmarks.speed.distributed                                   # Bluff(2,1), Goofspiel(7) rules path
    python -m benchmarks.speed.distributed --rules "goofspiel(cards=6)" --compiled "goofspiel(cards=6)"
    python -m benchmarks.speed.distributed --cfr "goofspiel(cards=6)" --iterations 20
    python -m benchmarks.speed.distributed --cfr "phantom_ttt(opening=(4, 0))" --iterations 2 \
        --project 2.3e8 --no-ray                                            # a rate, and what it gives PTTT (4,)

Per game, exploitability of the uniform policy three ways: *one walk* (``workers=1``, the unsharded code),
*shards here* (``shards=workers`` run one after another in this process: the cost of splitting and merging;
`--no-here` skips it)
and *Ray* (``workers`` Ray workers, the same shards, so the same numbers bit for bit). Rules-path games
(`--rules`) walk the game by its rules with an empty `CodePolicy` played uniformly (``default="uniform"``);
compiled games (`--compiled`) are compiled first (not timed) and evaluate `Policy.uniform`. The local Ray is
started by the first sharded call, on Kuhn (reported apart), so that the workers have loaded the numba kernels
before timing. Wall seconds; the speed-up is one walk / Ray. Say how busy the machine was: the load
average before the run is printed.

`--cfr` runs `--iterations` full-width CFR iterations over the rules (`rcfr.solvers.rules_cfr`, vanilla CFR, alternating
updates: two walks per iteration) three ways: one process (unsharded), ``shards=workers`` here, and `workers` Ray
workers with the same shards; it reports the numbering walk's time apart, the iterations' wall seconds, whether
Ray gave the shards-here iterates bit for bit, the cumulative regrets' largest gap between shards here and one
process after the first iteration, and the first iteration at which their current strategies differ by more
than 1e-9 (shards sum each sequence's terminal values in another order; at a tie of regrets, regret matching
turns that rounding into another strategy), and whether Ray gave the one process's iterates bit for bit; one
row per `--sums` (float, fixed: `rcfr.solvers.rules_cfr.SUMS`). `--project H` adds the seconds per iteration a walk of H histories would take
at the one process's measured rate (histories per second of the update walks).

`--cpu` (no Ray) times each step of the sharded rules walk in CPU seconds, one after another in this process,
and projects what idle cores would give: one walk / (prefix counts + slowest shard + merge + best responses),
transfers and Ray's per-task overhead left out.
"""

from __future__ import annotations

import argparse
import functools
import os
import time

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


from benchmarks.speed.large_games import parse  # noqa: E402  (same spelling of game specs)


def _timed(function, clock=time.perf_counter):
    start = clock()
    result = function()
    return result, clock() - start


def cpu_breakdown(rules, policy, shards: int) -> None:
    """CPU seconds of the one walk and of each step of the sharded walk, run here one after another: what
    `shards` idle cores would take is the prefix count + the slowest shard + the merge and best-response pass."""
    from rcfr.evaluation import rules as evaluation
    from rcfr.evaluation.shards import merge
    cpu = time.process_time
    one, one_cpu = _timed(lambda: evaluation.walk(rules, policy, "uniform"), cpu)
    common = (rules, policy, True)
    (cut, subtrees), cut_cpu = _timed(lambda: evaluation._cut(common, shards, None), cpu)
    parts, shard_cpu = [], []
    for k in range(shards):
        task = (cut, k * subtrees // shards, (k + 1) * subtrees // shards)
        part, seconds = _timed(functools.partial(evaluation._shard, common, task), cpu)
        parts.append(part)
        shard_cpu.append(seconds)
    (arrays, out, _), merge_cpu = _timed(lambda: merge(parts, policy.first, policy.codes), cpu)
    order, above, owner, tv = arrays["order"], arrays["above"], arrays["owner"], arrays["tv"]
    _, best_cpu = _timed(lambda: evaluation._best_responses(order, above, owner, policy.first, arrays["extra_first"],
                                                            tv, out), cpu)
    returned = sum(sum(a.nbytes for a in part.values()) for part in parts) / 2**20
    critical = cut_cpu + max(shard_cpu) + merge_cpu + best_cpu
    print(f"| {rules.description()} | {int(one['histories']):,} | {one_cpu:.1f} | {cut} ({subtrees}) | {cut_cpu:.2f} | "
          f"{' / '.join(f'{s:.1f}' for s in shard_cpu)} | {merge_cpu:.2f} | {best_cpu:.2f} | {returned:.0f} | "
          f"{one_cpu / critical:.2f} | {abs(out[1] + out[2] - one['br0'] - one['br1']) / 2:.1e} |", flush=True)


def cfr_rows(spec: str, iterations: int, workers: int, here: bool, ray: bool, project: float | None,
             sums: str = "float") -> None:
    """One row of the CFR table (see the module docstring)."""
    import numpy as np

    import rcfr
    name, params = parse(spec)
    rules = rcfr.make_rules(name, **params)
    options = {"walk": "general", "sums": sums} if name == "liars_dice" else {"sums": sums}

    def solver(**sharding):
        made = rcfr.make_solver("cfr", rules, **options)
        if sharding:
            made.distribute(**sharding)
        _, layout_s = _timed(lambda: made.layout)
        return made, layout_s

    def regrets(made):
        return made._profile(made.store.regrets)

    # one process and the same shards here in lockstep: where their strategies first part (regret matching
    # turns a rounding difference at a tie of regrets into a different strategy)
    one, one_layout = solver()
    here = solver(shards=workers)[0] if here else None
    one_s = here_s = 0.0
    parted, first_gap = "-", "-"
    for t in range(1, iterations + 1):
        one_s += _timed(one.iterate)[1]
        if here is not None:
            here_s += _timed(here.iterate)[1]
            if t == 1:
                first_gap = f"{np.abs(regrets(here) - regrets(one)).max():.1e}"
            if parted == "-" and np.abs(here.current_policy().probs - one.current_policy().probs).max() > 1e-9:
                parted = str(t)
    at_ray = None
    if ray:
        far = solver(workers=workers)[0]
        at_ray = far, _timed(lambda: far.run(iterations))[1]
    per_walk = one.nodes_touched / (2 * iterations)
    rate = 2 * iterations * per_walk / one_s
    equal_one = "-" if at_ray is None else str(
        np.array_equal(regrets(one), regrets(at_ray[0]))
        and np.array_equal(one.average_policy().probs, at_ray[0].average_policy().probs))
    cells = [f"{spec}, {sums} sums", f"{int(per_walk):,}", f"{one_layout:.1f}", f"{one_s:.1f} ({one_s / iterations:.2f}/it)"]
    cells.append("-" if here is None else f"{here_s:.1f} ({here_s / iterations:.2f}/it)")
    cells.append("-" if at_ray is None else f"{at_ray[1]:.1f} ({at_ray[1] / iterations:.2f}/it)")
    cells.append("-" if at_ray is None else f"{one_s / at_ray[1]:.2f}")
    cells.append("-" if here is None or at_ray is None else str(
        np.array_equal(regrets(here), regrets(at_ray[0]))
        and np.array_equal(here.average_policy().probs, at_ray[0].average_policy().probs)))
    cells += [first_gap, parted, equal_one]
    cells.append(f"{rate:.3g}")
    if project:
        cells.append(f"{2 * project / rate:.0f}")
    print("| " + " | ".join(cells) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rules", nargs="*", default=["liars_dice(dice1=2, dice2=1)", "goofspiel(cards=7)"])
    parser.add_argument("--compiled", nargs="*", default=[])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-here", action="store_true", help="skip the shards-here column (saves a walk)")
    parser.add_argument("--cfr", nargs="*", default=[], help="rules games to run CFR iterations on")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--no-ray", action="store_true", help="CFR: skip the Ray column")
    parser.add_argument("--sums", nargs="*", default=["float", "fixed"], help="CFR: the solver's sums, each a row")
    parser.add_argument("--project", type=float, default=None, help="CFR: histories of a walk to project to")
    parser.add_argument("--cpu", action="store_true", help="no Ray: CPU seconds of each step of the sharded walk, "
                        "and the speed-up idle cores would give (rules games)")
    args = parser.parse_args()
    import numpy as np

    import rcfr
    from rcfr.evaluation import rules as evaluation
    from rcfr.policy.rules import CodePolicy

    print(f"load average before: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    kuhn = rcfr.make_rules("kuhn")

    def empty(rules):
        return CodePolicy(rules, np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0))

    if args.cfr:
        if not args.no_ray:  # the local Ray started and the kernels loaded before timing
            _, warm_s = _timed(lambda: rcfr.make_solver("cfr", kuhn).distribute(workers=args.workers).run(1))
            print(f"Ray start and first sharded iteration (workers load the kernels): {warm_s:.1f} s\n")
        w = args.workers
        print(f"| game | histories per walk | numbering walk s | one process s | {w} shards here s | Ray, {w} workers s "
              f"| speed-up | Ray = shards here | regret gap to one process after iteration 1 | strategies part from one "
              f"process at iteration | Ray = one process | histories/s (one process) |" + (f" projected s per iteration at {args.project:.3g} histories |" if args.project else ""))
        print("|---" * (12 + bool(args.project)) + "|")
        for spec in args.cfr:
            for sums in args.sums:
                cfr_rows(spec, args.iterations, w, not args.no_here, not args.no_ray, args.project, sums)
        print(f"\nload average after: {os.getloadavg()[0]:.2f}")
        return

    if args.cpu:
        evaluation.walk(kuhn, empty(kuhn), "uniform", shards=2)  # kernels loaded before timing
        print(f"| game | histories | one walk CPU s | cut (subtrees) | prefix counts CPU s | shards CPU s | "
              f"merge CPU s | best responses CPU s | MiB returned | projected speed-up, {args.workers} idle cores | "
              "gap to one walk |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for spec in args.rules:
            name, params = parse(spec)
            rules = rcfr.make_rules(name, **params)
            cpu_breakdown(rules, empty(rules), args.workers)
        return

    _, warm_s = _timed(lambda: evaluation.evaluate(kuhn, empty(kuhn), "uniform", workers=args.workers))
    print(f"Ray start and first sharded call (workers load the kernels): {warm_s:.1f} s\n")
    w = args.workers
    print(f"| game | path | histories | one walk s | {w} shards here s | Ray, {w} workers s | speed-up | "
          f"exploitability | Ray = shards here | gap to one walk |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for spec in args.rules:
        name, params = parse(spec)
        rules = rcfr.make_rules(name, **params)
        policy = empty(rules)
        walk = functools.partial(evaluation.walk, rules, policy, "uniform")
        one, one_s = _timed(walk)
        here, here_s = (None, float("nan")) if args.no_here else _timed(functools.partial(walk, shards=w))
        far, far_s = _timed(functools.partial(walk, workers=w))
        exploit = (one["br0"] + one["br1"]) / 2
        gap = abs((far["br0"] + far["br1"]) / 2 - exploit)
        print(f"| {spec} | rules | {int(one['histories']):,} | {one_s:.1f} | {here_s:.1f} | {far_s:.1f} | "
              f"{one_s / far_s:.2f} | {exploit:.6f} | {'-' if here is None else far == here} | {gap:.1e} |", flush=True)
    for spec in args.compiled:
        name, params = parse(spec)
        game = rcfr.load_game(name, **params)
        policy = rcfr.Policy.uniform(game)
        assert game.views  # built before timing
        score = functools.partial(rcfr.evaluate, game, policy)
        one, one_s = _timed(score)
        here, here_s = _timed(functools.partial(score, shards=w))
        far, far_s = _timed(functools.partial(score, workers=w))
        print(f"| {spec} | compiled | {game.num_histories:,} | {one_s:.2f} | {here_s:.2f} | {far_s:.2f} | "
              f"{one_s / far_s:.2f} | {one.exploitability:.6f} | {far == here} | "
              f"{abs(far.exploitability - one.exploitability):.1e} |", flush=True)
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
