"""Nodes touched per CPU second of the sampling kernels in several checkouts, interleaved so that
they share the machine's state (on a loaded machine, measure versions side by side, not hours apart).

    git worktree add /tmp/before <commit>       # or: git archive <commit> rcfr | tar -x -C /tmp/before
    python -m benchmarks.speed.kernel_versions /tmp/before . --rounds 2 --configs os,os-simultaneous,vr,es

Each measurement is a fresh process importing ``rcfr`` from one checkout (with that checkout's numba
cache; the first run of a checkout compiles): the best of 3 blocks of 300,000 iterations (30,000 for
chance sampling) on Leduc after a warm-up, timed with ``time.process_time``. Configurations are those
of ``bench_mccfr.py``; a checkout whose solvers reject an option is reported as failed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.speed.mccfr import CONFIGS  # noqa: E402

CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import rcfr
name, options = json.loads(sys.argv[2])
solver = rcfr.make_solver(name, rcfr.load_game(sys.argv[3]), seed=0, **options)
solver.run(2000)
best = 0.0
for _ in range(3):
    nodes, start = solver.nodes_touched, time.process_time()
    solver.run(int(sys.argv[4]))
    best = max(best, (solver.nodes_touched - nodes) / (time.process_time() - start))
print(best)
"""


def measure(checkout: str, config: str, game: str) -> float | None:
    name, options = CONFIGS[config]
    iterations = 30_000 if name == "cscfr" else 300_000
    done = subprocess.run([sys.executable, "-c", CHILD, str(Path(checkout).resolve()), json.dumps([name, options]),
                           game, str(iterations)], capture_output=True, text=True,
                          env={**os.environ, "NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})
    return float(done.stdout) if done.returncode == 0 else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkouts", nargs="+", help="directories holding an rcfr package")
    parser.add_argument("--configs", default="os,os-simultaneous,vr,es", help=f"of: {', '.join(CONFIGS)}")
    parser.add_argument("--game", default="leduc")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    configs = args.configs.split(",")
    print("| checkout | round | " + " | ".join(configs) + " |\n|---|---|" + "---|" * len(configs))
    for round_ in range(1, args.rounds + 1):
        for checkout in args.checkouts:
            rates = [measure(checkout, c, args.game) for c in configs]
            cells = ["failed" if r is None else f"{r / 1e6:.1f}M" for r in rates]
            print(f"| {checkout} | {round_} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
