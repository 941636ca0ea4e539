"""What the experiment kit costs on top of the solver loop: per-iteration bookkeeping, evaluations
and checkpoints. Prints a table; run with `python -m benchmarks.speed.experiment_overhead`."""

from __future__ import annotations

import tempfile
import time

import rcfr  # noqa: E402
from rcfr.experiments.runner import run_experiment  # noqa: E402


def raw(game_name: str, solver: str, iterations: int) -> float:
    game = rcfr.load_game(game_name)
    s = rcfr.make_solver(solver, game)
    s.run(1)
    start = time.perf_counter()
    s.run(iterations - 1)
    return time.perf_counter() - start


def kit(game_name: str, solver: str, iterations: int, **run) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        summary = run_experiment({"game": {"name": game_name}, "solver": {"name": solver},
                                  "run": {"iterations": iterations, "progress": False, **run}}, tmp)
        return summary["seconds"], time.perf_counter() - start


def main() -> None:
    rows = []
    for game, solver, n in [("leduc", "cfr+", 20000), ("nlocp", "cfr+", 10000), ("kuhn", "cfr", 50000),
                            ("leduc", "es-mccfr", 200000), ("leduc", "os-mccfr", 1000000)]:
        base = raw(game, solver, n)
        for label, run in [("20 evals", {"eval_points": 20}), ("40 evals + ckpt/1000", {"eval_points": 40,
                                                                                      "checkpoint_every": 1000})]:
            solve, total = kit(game, solver, n, **run)
            rows.append((game, solver, n, label, 1e3 * base / n, 1e3 * solve / n, total))
    print("| game | solver | iterations | kit settings | raw ms/it | kit solve ms/it | kit wall s |")
    print("|---|---|---|---|---|---|---|")
    for game, solver, n, label, a, b, total in rows:
        print(f"| {game} | {solver} | {n} | {label} | {a:.4f} | {b:.4f} | {total:.2f} |")


if __name__ == "__main__":
    main()
