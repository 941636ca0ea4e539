"""Evaluation past exact best response (`rcfr.approx_exploitability`, `rcfr.match_policies`): the tables of
docs/approx_evaluation.md.

    python -m benchmarks.studies.approx_evaluation                 # all parts (about 10 minutes on one core)
    python -m benchmarks.studies.approx_evaluation --parts exact   # one part: exact, sampled, large, matches

* ``exact``: Kuhn, Leduc and Goofspiel(5) (compiled); per policy (uniform, CFR's average after 10 and 200
  iterations) and per method and budget (nodes touched per player), the lower bound scored exactly, mean and
  range over seeds 0-2, beside the exact exploitability;
* ``sampled``: the same bound scored by play-outs, with its 95% CI, on Leduc;
* ``large``: Bluff(2,2) (the exact value from the public-tree walk, `rcfr.evaluation.bluff`) and
  Goofspiel(13) (none exact) walked by their rules, uniform policy, outcome-sampled responders;
* ``matches``: head-to-head values with their CI beside the exact values (Leduc), and on Goofspiel(13) an
  outcome-sampling MCCFR average against the uniform policy.

Wall seconds are of the machine that runs it, one core; state how busy it was.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import rcfr  # noqa: E402
from rcfr import Policy  # noqa: E402

PARTS = ("exact", "sampled", "large", "matches")
SEEDS = (0, 1, 2)
#: per game, (method, chance in training) -> budgets (nodes touched per player)
BUDGETS = {"kuhn": {("es-br", "sample"): (1_000, 10_000, 100_000, 1_000_000), ("es-br", "enumerate"): (100_000,),
                    ("os-br", "sample"): (10_000, 100_000)},
           "leduc": {("es-br", "sample"): (10_000, 100_000, 1_000_000), ("es-br", "enumerate"): (1_000_000,),
                     ("os-br", "sample"): (100_000, 1_000_000)},
           "goofspiel(5)": {("es-br", "sample"): (10_000, 100_000, 1_000_000),
                            ("os-br", "sample"): (100_000, 1_000_000)}}


def compiled_games():
    return {"kuhn": rcfr.load_game("kuhn"), "leduc": rcfr.load_game("leduc"),
            "goofspiel(5)": rcfr.load_game("goofspiel", cards=5)}


def cfr_average(game, iterations):
    solver = rcfr.make_solver("cfr", game)
    solver.run(iterations)
    return solver.average_policy()


def policies(game):
    return {"uniform": Policy.uniform(game), "CFR, 10 iterations": cfr_average(game, 10),
            "CFR, 200 iterations": cfr_average(game, 200)}


def timed(call):
    start = time.perf_counter()
    result = call()
    return result, time.perf_counter() - start


def part_exact() -> None:
    print("| game | policy | exact | method | budget / player | lower bound (mean, seeds 0-2) | range | gap | "
          "s / seed |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, game in compiled_games().items():
        for label, policy in policies(game).items():
            exact = rcfr.exploitability(game, policy)
            for (method, chance), budgets in BUDGETS[name].items():
                for budget in budgets:
                    runs, seconds = [], 0.0
                    for seed in SEEDS:
                        got, s = timed(lambda: rcfr.approx_exploitability(game, policy, method, budget, seed,
                                                                          chance=chance))
                        runs.append(got.exploitability)
                        seconds += s
                    mean = float(np.mean(runs))
                    shown = method if chance == "sample" else f"{method}, chance enumerated"
                    print(f"| {name} | {label} | {exact:.4f} | {shown} | {budget:,} | {mean:.4f} | "
                          f"{min(runs):.4f}-{max(runs):.4f} | {exact - mean:.2g} | {seconds / len(SEEDS):.2f} |")


def part_sampled() -> None:
    game = rcfr.load_game("leduc")
    print("| game | policy | exact | method | budget / player | samples / player | lower bound ± 95% CI | "
          "exact inside or above? | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, policy in policies(game).items():
        exact = rcfr.exploitability(game, policy)
        for method, budget in (("es-br", 1_000_000), ("os-br", 1_000_000)):
            for seed in SEEDS:
                got, s = timed(lambda: rcfr.approx_exploitability(game, policy, method, budget, seed,
                                                                  samples=100_000, evaluation="sampled"))
                where = "inside" if got.low <= exact <= got.high else ("above" if exact > got.high else "BELOW")
                print(f"| leduc | {label} | {exact:.4f} | {method} (seed {seed}) | {budget:,} | 100,000 | "
                      f"{got.exploitability:.4f} ± {got.ci95:.4f} | {where} | {s:.1f} |")


def empty_policy(game):
    from rcfr.policy.rules import CodePolicy
    return CodePolicy(game.rules, np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0))


def part_large() -> None:
    from rcfr.evaluation import bluff as bluff_evaluation
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bluff = rcfr.load_game("liars_dice", compiled=False, dice1=2, dice2=2)
        goof = rcfr.load_game("goofspiel", compiled=False, cards=13)
    exact, s = timed(lambda: bluff_evaluation.evaluate(bluff.rules, empty_policy(bluff), "uniform").exploitability)
    print(f"Bluff(2,2) uniform, exact on the public tree: {exact:.6f} chips ({s:.1f} s)\n")
    print("| game | policy | exact | method | budget / player | min_visits | sets met / played best (player 0, 1) | "
          "samples / player | lower bound ± 95% CI | s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, game, truth in (("Bluff(2,2)", bluff, f"{exact:.4f}"), ("Goofspiel(13)", goof, "-")):
        for budget, visits in ((1_000_000, 20), (10_000_000, 10), (10_000_000, 20), (10_000_000, 30)):
            got, s = timed(lambda: rcfr.approx_exploitability(game, empty_policy(game), "os-br", budget, 0,
                                                              samples=100_000, min_visits=visits, default="uniform"))
            sets = f"{got.responder_infosets[0]:,} / {got.best_infosets[0]:,}; " \
                   f"{got.responder_infosets[1]:,} / {got.best_infosets[1]:,}"
            print(f"| {name} | uniform | {truth} | os-br | {budget:,} | {visits} | {sets} | 100,000 | "
                  f"{got.exploitability:.4f} ± {got.ci95:.4f} | {s:.1f} |")


def versus(game, a, b):
    first = rcfr.expected_value(game, Policy.from_local(game, [a.local(0), b.local(1)]))
    second = rcfr.expected_value(game, Policy.from_local(game, [b.local(0), a.local(1)]))
    return (first - second) / 2


def part_matches() -> None:
    game = rcfr.load_game("leduc")
    pols = policies(game)
    print("| game | a | b | exact value of a | chance | samples (pairs) | estimate ± 95% CI | a as player 0 / 1 | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for a_name, b_name in (("CFR, 200 iterations", "uniform"), ("CFR, 200 iterations", "CFR, 10 iterations")):
        a, b = pols[a_name], pols[b_name]
        exact = versus(game, a, b)
        for chance in ("sample", "enumerate"):
            got, s = timed(lambda: rcfr.match_policies(game, a, b, 100_000, 0, chance=chance))
            print(f"| leduc | {a_name} | {b_name} | {exact:.4f} | {chance} | 100,000 | "
                  f"{got.value:.4f} ± {got.ci95:.4f} | "
                  f"{got.seat_values[0]:.4f} / {got.seat_values[1]:.4f} | {s:.1f} |")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        goof = rcfr.load_game("goofspiel", compiled=False, cards=13)
    solver = rcfr.make_solver("os-mccfr", goof, seed=0)
    _, train = timed(lambda: solver.run(100_000))
    trained = solver.average_policy()
    uniform = empty_policy(goof)
    got, s = timed(lambda: rcfr.match_policies(goof, trained, uniform, 100_000, 0, default="uniform"))
    print(f"| Goofspiel(13) | OS-MCCFR, 100,000 iterations ({trained.num_infosets:,} sets, {train:.0f} s) "
          f"| uniform | - "
          f"| sample | 100,000 | {got.value:.4f} ± {got.ci95:.4f} | {got.seat_values[0]:.4f} / "
          f"{got.seat_values[1]:.4f} | {s:.1f} |")
    print()
    print("| Goofspiel(13) policy | os-br budget / player | min_visits | lower bound ± 95% CI | s |")
    print("|---|---|---|---|---|")
    for label, policy in (("OS-MCCFR, 100,000 iterations", trained), ("uniform", uniform)):
        got, s = timed(lambda: rcfr.approx_exploitability(goof, policy, "os-br", 10_000_000, 0, samples=100_000,
                                                          min_visits=30, default="uniform"))
        print(f"| {label} | 10,000,000 | 30 | {got.exploitability:.4f} ± {got.ci95:.4f} | {s:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    args = parser.parse_args()
    for part in args.parts:
        print(f"\n## {part}\n", flush=True)
        globals()[f"part_{part}"]()
        sys.stdout.flush()


if __name__ == "__main__":
    main()
