"""The four Deep CFR family solvers on Kuhn (or any game) at their default options: exploitability of the
average policy, nodes touched and seconds after a fixed number of iterations (issue 22; docs/neural.md).

    OMP_NUM_THREADS=1 python -m benchmarks.studies.neural_kuhn kuhn 30 '{"name": "best_first", "max_leaves": 64}'
"""

from __future__ import annotations

import json
import sys
import time

from rcfr import evaluate, load_game, make_solver

ARMS = [("deep-cfr", {}), ("sd-cfr", {}), ("sd-cfr", {"sampler": "outcome", "traversals": 1000}), ("dream", {}),
        ("escher", {})]


def main() -> None:
    game, iterations = load_game(sys.argv[1]), int(sys.argv[2])
    regressor = json.loads(sys.argv[3])
    print("| solver | options | iterations | nodes touched | exploitability (mbb/g) | wall s |")
    print("|---|---|---|---|---|---|")
    for name, options in ARMS:
        solver = make_solver(name, game, regressor=regressor, **options)
        start = time.time()
        solver.run(iterations)
        mbb = evaluate(game, solver.average_policy()).exploitability_mbb
        print(f"| {name} | {options or ''} | {solver.iteration} | {solver.nodes_touched} | {mbb:.1f} | "
              f"{time.time() - start:.1f} |", flush=True)


if __name__ == "__main__":
    main()
