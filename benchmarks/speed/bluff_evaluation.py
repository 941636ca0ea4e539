"""Exact evaluation of Bluff(D1, D2) policies on the public bid tree (`rcfr.evaluation.bluff`): time,
peak memory and values, one subprocess per case (so each peak is its own), then Bluff's sizes beside the
thesis's (Lanctot 2013, Table 5.1). See docs/large_games.md, "Bluff(2,2)".

    python -m benchmarks.speed.bluff_evaluation --dice 2,2 --cases implicit random random32
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

CASES = {
    "implicit": "uniform: an empty policy with default='uniform' (no policy in memory)",
    "uniform": "uniform: the whole policy, float64",
    "random": "random (rows uniform on the simplex, seed 0), float64",
    "random32": "the same random policy, float32",
}


def uniform_value_by_theory(dice1: int, dice2: int) -> float:
    """Player 0's value when both play uniformly, without the game tree: the policy ignores the dice, so
    the value is a sum over (last bid, caller) of the probability of calling there (a dynamic programme
    over bids) times the chance the claim holds (binomial: each die shows a face or a star with
    probability 1/3, a star with 1/6)."""
    from math import comb
    n = (dice1 + dice2) * 6
    dice = dice1 + dice2

    def holds(bid: int) -> float:
        quantity, face = bid // 6 + 1, bid % 6
        p = 1 / 6 if face == 5 else 1 / 3
        return sum(comb(dice, k) * p**k * (1 - p) ** (dice - k) for k in range(quantity, dice + 1))

    mass = [[0.0, 0.0] for _ in range(n)]  # reach of a node by last bid and parity of the bids made
    for b in range(n):
        mass[b][1] += 1 / n
    value = 0.0
    for last in range(n):
        for parity in (0, 1):
            m = mass[last][parity]
            if not m:
                continue
            sign = -1.0 if parity == 0 else 1.0  # the caller is the player to move: parity
            call = m if last == n - 1 else m / (n - last)  # forced after the top bid
            value += call * sign * (2 * holds(last) - 1)
            for b in range(last + 1, n):
                mass[b][1 - parity] += m / (n - last)
    return value


def run_case(dice1: int, dice2: int, case: str) -> dict:
    import numpy as np

    import rcfr
    from rcfr.evaluation import bluff as bluff_eval
    from rcfr.policy.rules import CodePolicy

    rules = rcfr.make_rules("liars_dice", dice1=dice1, dice2=dice2)
    start = time.perf_counter()
    if case == "implicit":
        policy = CodePolicy(rules, np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0))
    else:
        kind = "uniform" if case == "uniform" else "random"
        policy = bluff_eval.bluff_policy(rules, kind, seed=0, dtype=np.float32 if case == "random32" else np.float64)
    built = time.perf_counter() - start
    start = time.perf_counter()
    raw = bluff_eval.walk(rules, policy, default="uniform" if case == "implicit" else None)
    walked = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return dict(raw, build_s=built, walk_s=walked, peak_mib=peak, policy_mib=policy.nbytes() / 2**20,
                pairs=int(policy.first[-1]), exploitability=(raw["br0"] + raw["br1"]) / 2)


def sizes_table(dice1: int, dice2: int) -> str:
    from math import comb

    from rcfr.abstraction.recall import bluff_counters
    rolls = [comb(5 + d, d) for d in (dice1, dice2)]
    n = 6 * (dice1 + dice2)
    thesis = {None: 704_643_030, 1: 12_600, 2: 97_608, 3: 543_900, 4: 2_329_068, 6: 22_518_468,
              8: 108_323_418, 10: 295_534_218} if (dice1, dice2) == (2, 2) else {}
    lines = ["| abstraction | (I, a) pairs, forced sets counted | thesis | without the forced sets |",
             "|---|---|---|---|"]
    for r in (None, 1, 2, 3, 4, 6, 8, 10):
        t = f"{thesis[r]:,}" if r in thesis else "—"
        lines.append(f"| {'none' if r is None else f'r = {r}'} | {bluff_counters(dice1, dice2, r):,} | {t} | "
                     f"{bluff_counters(dice1, dice2, r, forced=False):,} |")
    sets = sum(rolls) * 2 ** (n - 1)
    lines.append(f"\ninformation sets: {sets:,} with the forced sets, {sets // 2:,} without "
                 f"({'thesis: 352 million' if (dice1, dice2) == (2, 2) else 'rolls x bid sequences'})")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dice", default="2,2", help="dice1,dice2 (default 2,2)")
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--case", help=argparse.SUPPRESS)  # one case, in a subprocess
    args = parser.parse_args()
    dice1, dice2 = (int(x) for x in args.dice.split(","))
    if args.case:
        print(json.dumps(run_case(dice1, dice2, args.case)))
        return
    print(f"Bluff({dice1},{dice2}); uniform value by theory: {uniform_value_by_theory(dice1, dice2):.15f}\n")
    print("| policy | build s | walk s | peak MiB | policy MiB | value | BR0 | BR1 | exploitability |")
    print("|---|---|---|---|---|---|---|---|---|")
    for case in args.cases:
        done = subprocess.run([sys.executable, "-m", __spec__.name, "--dice", args.dice, "--case", case],
                              capture_output=True, text=True)
        if done.returncode:
            print(f"| {case} | failed: {done.stderr.strip().splitlines()[-1][:200]} |")
            continue
        r = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"| {CASES[case]} | {r['build_s']:.1f} | {r['walk_s']:.1f} | {r['peak_mib']:.0f} | "
              f"{r['policy_mib']:.0f} | {r['value']:.15f} | {r['br0']:.12f} | {r['br1']:.12f} | "
              f"{r['exploitability']:.12f} |", flush=True)
    print()
    print(sizes_table(dice1, dice2))


if __name__ == "__main__":
    main()
