"""Sampling on the rules against sampling on the compiled tree (issue 20): nodes per CPU second and memory.

    python -m benchmarks.speed.rules_sampling                                   # the table of docs/large_games.md
    python -m benchmarks.speed.rules_sampling --games "goofspiel(cards=5)" --samplers es os --seconds 5

Compilable games (*compiled* and *rules* rows): the same solver and seed on both paths, each for
``--seconds`` CPU seconds of iterations (chunks of growing size); the rules path then reruns the compiled
run's iteration count and must touch exactly as many nodes (the walks meet the same nodes in the same order).
Compile time is reported apart. Games beyond the compiled tree (*rules* rows only): nodes per CPU second,
information sets met, bytes of the rules path's arrays per set met (their capacity: sets double when half
used, so between 1x and 2x of what is used) and the process's peak resident memory, after each budget in
``--budgets`` (how both grow with iterations).

Numbers are CPU seconds of this process (the machine is shared: wall time would count the neighbours).
"""

from __future__ import annotations

import argparse
import os
import resource
import time
import warnings

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import rcfr  # noqa: E402
from benchmarks.speed.large_games import parse  # noqa: E402  (same spelling of game specs)
from rcfr.solvers import mccfr  # noqa: E402

SAMPLERS = {"es": mccfr.ExternalSamplingMCCFR, "os": mccfr.OutcomeSamplingMCCFR, "cs": mccfr.ChanceSamplingCFR}
COMPILABLE = ["goofspiel(cards=7)", "liars_dice(dice1=2, dice2=1)"]
LARGE = ["phantom_ttt()", "liars_dice(dice1=2, dice2=2)", "goofspiel(cards=13)"]
#: (game, sampler) pairs whose first iteration cannot finish: printed as a row saying why, not run
INFEASIBLE = {("goofspiel(cards=13)", "es"): "not run: an iteration walks all of the updating player's bid "
                                             "sequences (13! = 6.2e9 of them; ~3.7e10 nodes and 1.8e10 sets met, "
                                             "extrapolated from Goofspiel(9)'s 2.1e6 and 1.0e6)"}


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed_run(solver, seconds: float) -> float:
    """Run chunks of doubling size until `seconds` CPU seconds are spent; return them."""
    start, chunk = time.process_time(), 1
    while time.process_time() - start < seconds:
        solver.run(chunk)
        chunk *= 2
    return time.process_time() - start


def compare(text: str, samplers: list[str], seconds: float) -> list[str]:
    name, params = parse(text)
    start = time.process_time()
    game = rcfr.load_game(name, cache=False, **params)
    compile_s = time.process_time() - start
    rules = rcfr.load_game(name, compiled=False, **params)
    rows = []
    for key in samplers:
        cls = SAMPLERS[key]
        compiled = cls(game, seed=0)
        compiled.run(1)  # numba code loaded outside the timing
        warm = cls(rules, seed=0)
        warm.run(1)
        compiled = cls(game, seed=0)
        cs = timed_run(compiled, seconds)
        walked = cls(rules, seed=0)
        rs = timed_run(walked, seconds)
        same = cls(rules, seed=0)
        same.run(compiled.iteration)
        equal = "yes" if same.nodes_touched == compiled.nodes_touched else "NO"
        c_rate, r_rate = compiled.nodes_touched / cs / 1e6, walked.nodes_touched / rs / 1e6
        rows.append(f"| {text} | {key} | {compile_s:.1f} | {c_rate:.2f} | {r_rate:.2f} | {r_rate / c_rate:.2f} | "
                    f"{walked.buffers.num_sets:,} of {game.num_infosets:,} | {equal} |")
    return rows


def grow(text: str, samplers: list[str], budgets: list[float]) -> list[str]:
    name, params = parse(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rules = rcfr.load_game(name, **params)
    rows = []
    for key in samplers:
        if (text, key) in INFEASIBLE:
            rows.append(f"| {text} | {key} | {INFEASIBLE[text, key]} ||||||")
            print(rows[-1], flush=True)
            continue
        solver = SAMPLERS[key](rules, seed=0)
        spent = 0.0
        for budget in budgets:
            start, chunk = time.process_time(), 1
            while spent + time.process_time() - start < budget:
                solver.run(chunk)
                chunk = min(2 * chunk, 1 << 16)
            spent += time.process_time() - start
            b = solver.buffers
            rows.append(f"| {text} | {key} | {solver.iteration:,} | {spent:.0f} | {b.nodes_touched / spent / 1e6:.2f} | "
                        f"{b.num_sets:,} | {b.nbytes() / max(b.num_sets, 1):.0f} | {peak_mib():,.0f} |")
            print(rows[-1], flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="*", default=COMPILABLE, help="compilable games: both paths")
    parser.add_argument("--large", nargs="*", default=LARGE, help="games beyond the compiled tree: rules only")
    parser.add_argument("--samplers", nargs="*", default=["es", "os", "cs"], choices=SAMPLERS)
    parser.add_argument("--large-samplers", nargs="*", default=["es", "os"], choices=SAMPLERS)
    parser.add_argument("--seconds", type=float, default=10.0, help="CPU seconds per run on compilable games")
    parser.add_argument("--budgets", type=float, nargs="*", default=[10, 30, 90], help="CPU seconds (cumulative)")
    args = parser.parse_args()
    if args.games:
        print("| game | sampler | compile s | compiled M nodes/CPU s | rules M nodes/CPU s | ratio | sets met "
              "(rules) | same nodes |\n|---|---|---|---|---|---|---|---|")
        for text in args.games:
            for row in compare(text, args.samplers, args.seconds):
                print(row, flush=True)
    if args.large:
        print("\n| game | sampler | iterations | CPU s | M nodes/CPU s | sets met | bytes per set met | peak MiB |\n"
              "|---|---|---|---|---|---|---|---|")
        for text in args.large:
            grow(text, args.large_samplers, args.budgets)


if __name__ == "__main__":
    main()
