"""Exact evaluation of Phantom Tic-Tac-Toe policies (`rcfr.evaluation.phantom`) against the general
rules walk (`rcfr.evaluation.rules`): time and memory on openings of growing size, and the full game.

    python -m benchmarks.speed.phantom_evaluation                            # openings, both walks where small
    python -m benchmarks.speed.phantom_evaluation --openings 4 0 "" --general-max 3e8 --workers 2

An opening is squares separated by commas ("" is the full game). Per opening and policy (uniform: every
set played uniformly through ``default="uniform"``; random: `phantom_policy(kind="random")`): the time to
build both players' sets (`PlayerSets`), the walk's wall and CPU seconds (CPU summed over its threads),
histories per wall second, the process's peak resident memory so far (cases run smallest first), and,
where the opening has at most ``--general-max`` histories, the general walk's seconds and the largest gap
between the two walks' value, best responses and exploitability.
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np


def main() -> None:
    import rcfr
    from rcfr.evaluation import phantom as pe
    from rcfr.evaluation import rules as evaluation
    from rcfr.games.phantom import phantom_counts
    from rcfr.policy.rules import CodePolicy

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--openings", nargs="+", default=["4,0,8", "4,0", "0,1", "4", "0"])
    parser.add_argument("--policies", nargs="+", default=["uniform", "random"], choices=["uniform", "random"])
    parser.add_argument("--workers", type=int, default=None, help="threads (default: numba's)")
    parser.add_argument("--general-max", type=float, default=6e6, help="run the general walk up to this many histories")
    args = parser.parse_args()
    openings = [tuple(int(c) for c in o.split(",") if c) for o in args.openings]

    warm = rcfr.make_rules("phantom_ttt", opening=(4, 0, 8, 2, 1))
    pe.evaluate(warm, pe.phantom_policy(warm), workers=args.workers)  # compiled before timing
    evaluation.evaluate(warm, pe.phantom_policy(warm))
    print(f"load average {os.getloadavg()[0]:.2f}, workers {pe.check_workers(args.workers)}")
    print("| opening | histories | policy | sets s | walk s | walk CPU s | Mhist/s | peak MiB | general s | max gap |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for op in openings:
        rules = rcfr.make_rules("phantom_ttt", opening=op)
        h = phantom_counts(op)[0]
        start = time.perf_counter()
        sets = pe.PlayerSets(rules)
        t_sets = time.perf_counter() - start
        for kind in args.policies:
            if kind == "uniform":
                policy, default = CodePolicy(rules, np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0)), "uniform"
            else:
                policy, default = pe.phantom_policy(rules, "random", seed=0, sets=sets), None
            wall, cpu = time.perf_counter(), time.process_time()
            raw = pe.walk(rules, policy, default, args.workers, sets)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            assert raw["histories"] == h, (raw["histories"], h)
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            general, gap = "—", "—"
            if h <= args.general_max:
                start = time.perf_counter()
                other = evaluation.walk(rules, policy, default)
                general = f"{time.perf_counter() - start:.1f}"
                ours = evaluation.evaluation_of(rules, raw)
                theirs = evaluation.evaluation_of(rules, other)
                gap = f"{max(abs(ours.value - theirs.value), abs(ours.exploitability - theirs.exploitability), *(abs(a - b) for a, b in zip(ours.best_response_values, theirs.best_response_values))):.1e}"
            ex = evaluation.evaluation_of(rules, raw).exploitability
            print(f"| {op or 'full game'} | {h:,} | {kind} (expl. {ex:.6f}) | {t_sets:.1f} | {wall:.1f} | {cpu:.1f} | "
                  f"{h / wall / 1e6:.1f} | {peak:.0f} | {general} | {gap} |", flush=True)


if __name__ == "__main__":
    main()
