"""One solver on one game until a node budget, exact exploitability at 6 log-spaced node counts (issue 22;
docs/neural.md: the tuning-seed runs and the tabular ES/OS seeds).

    OMP_NUM_THREADS=1 python -m benchmarks.studies.neural_budget leduc es-mccfr '{}' 4.5e6 0
"""

from __future__ import annotations

import json
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from rcfr import evaluate, load_game, make_solver  # noqa: E402


def main() -> None:
    game = load_game(sys.argv[1])
    name, options, budget = sys.argv[2], json.loads(sys.argv[3]), float(sys.argv[4])
    seed = int(sys.argv[5]) if len(sys.argv) > 5 else 100
    solver = make_solver(name, game, seed=seed, **options)
    marks, cpu = list(np.geomspace(budget / 30, budget, 6)), 0.0
    while marks:
        start = time.process_time()
        solver.iterate()
        cpu += time.process_time() - start
        if solver.nodes_touched >= marks[0]:
            while marks and solver.nodes_touched >= marks[0]:
                marks.pop(0)
            print(name, json.dumps(options), "seed", seed, "it", solver.iteration, "nodes %.3g" % solver.nodes_touched,
                  "cpu %.1f" % cpu, "mbb %.1f" % evaluate(game, solver.average_policy()).exploitability_mbb, flush=True)


if __name__ == "__main__":
    main()
