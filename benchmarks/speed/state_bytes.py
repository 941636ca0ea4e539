"""What each solver keeps between iterations (`solver.state_bytes()`), per sequence of the game.

    python -m benchmarks.speed.state_bytes                       # Leduc, compiled: every table and RCFR form
    python -m benchmarks.speed.state_bytes --rules --iterations 2000   # Bluff(1,1) walked by its rules: per set met

Each solver runs `--iterations` iterations (bytes on a compiled game do not depend on them; on the rules
path they follow the sets met), then prints its bytes, bytes per sequence (or per set met) and the three
largest parts of `state_breakdown`.
"""

from __future__ import annotations

import argparse

import rcfr
from rcfr.solvers import make_solver
from rcfr.solvers.state_bytes import state_breakdown

TREES = {"name": "best_first", "max_leaves": 64}
COMPILED = {
    "cfr": {}, "cfr+": {}, "es-mccfr": {"seed": 0}, "os-mccfr": {"seed": 0},
    "rcfr+": {"regressor": TREES, "features": "poker"},
    "sampled-rcfr (dense)": {"regressor": TREES, "features": "poker", "seed": 0},
    "sampled-rcfr+ (lean, visited)": {"regressor": TREES, "features": "poker", "features_on_demand": True,
                                      "targets": "stored", "capacity": 10_000, "seed": 0},
    "sampled-rcfr (lean, cache)": {"regressor": TREES, "features": "poker", "features_on_demand": True,
                                   "targets": "reservoir", "capacity": 10_000, "profile": "cache", "seed": 0},
}
RULES = {
    "es-mccfr": {"seed": 0},
    "sampled-rcfr+ (lean, rules)": {"regressor": TREES, "features": "liars_dice", "features_on_demand": True,
                                    "targets": "stored", "capacity": 10_000, "seed": 0, "refit_every": 100},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rules", action="store_true", help="Bluff(1,1) walked by its rules")
    parser.add_argument("--iterations", type=int, default=100)
    args = parser.parse_args()
    if args.rules:
        game, arms, unit = rcfr.load_game("liars_dice", dice1=1, dice2=1, compiled=False), RULES, "set met"
    else:
        game, arms, unit = rcfr.load_game("leduc"), COMPILED, "sequence"
    print(f"| solver | bytes | bytes per {unit} | largest parts |")
    print("|---|---|---|---|")
    for label, options in arms.items():
        name = label.split(" ")[0]
        solver = make_solver(name, game, **options).run(args.iterations)
        parts = sorted(state_breakdown(solver).items(), key=lambda kv: -kv[1])
        total = sum(v for _, v in parts)
        count = solver.buffers.num_sets if args.rules else game.num_sequences
        largest = ", ".join(f"`{k}` {v:,}" for k, v in parts[:3])
        print(f"| {label} | {total:,} | {total / max(count, 1):,.1f} | {largest} |")


if __name__ == "__main__":
    main()
