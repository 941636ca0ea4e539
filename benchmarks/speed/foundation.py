"""Foundation benchmark: tree build, CFR+ iteration and exact exploitability per game.

    python -m benchmarks.speed.foundation [--repeats 5]

Prints a Markdown table. Times are the best of `repeats` runs on one core (set OMP_NUM_THREADS=1);
peak memory is the peak of Python-tracked allocations (NumPy included) while building and solving.
"""

from __future__ import annotations

import argparse
import os
import time
import tracemalloc

os.environ.setdefault("OMP_NUM_THREADS", "1")

import rcfr  # noqa: E402
from rcfr.games import make_rules  # noqa: E402

GAMES = [("kuhn", {}), ("leduc", {}), ("leduc", {"merge_suits": True}), ("nlocp", {})]


def best_of(repeats: int, fn, number: int) -> float:
    """Best mean seconds per call over `repeats` batches of `number` calls."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def measure(name: str, params: dict, repeats: int) -> dict:
    rules = make_rules(name, **params)
    tracemalloc.start()
    build = best_of(repeats, lambda: rcfr.compile_game(rules), 1)
    game = rcfr.compile_game(rules)
    solver = rcfr.make_solver("cfr+", game)
    solver.run(10)  # compile kernels, warm caches
    iteration = best_of(repeats, solver.iterate, 200)
    policy = solver.average_policy()
    rcfr.exploitability(game, policy)
    evaluation = best_of(repeats, lambda: rcfr.exploitability(game, policy), 100)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"game": rules.description() if params else name, "histories": game.num_histories,
            "infosets": game.num_infosets, "sequences": game.num_sequences,
            "build_ms": build * 1e3, "cfr+_iter_ms": iteration * 1e3, "exploitability_ms": evaluation * 1e3,
            "peak_MiB": peak / 2**20}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rows = [measure(name, params, args.repeats) for name, params in GAMES]
    columns = list(rows[0])
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row.values()) + " |")


if __name__ == "__main__":
    main()
