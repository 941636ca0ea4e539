"""ESCHER's value function on Leduc: how much of the game one batch of value rollouts reaches, and the
value regressor's error against the exact history values, beside the spread of those values (issue 22;
docs/neural.md, "Why ESCHER ... falls short"). Slow-ish: a few minutes of CPU.

    OMP_NUM_THREADS=1 python benchmarks/neural_value_diagnostic.py
"""

import numpy as np
from rcfr import load_game, make_solver, evaluate
from rcfr.solvers.neural import history_values
g = load_game("leduc")
for vt in (200, 5000):
    s = make_solver("escher", g, regressor={"name":"best_first","max_leaves":512}, features="poker", traversals=200, value_traversals=vt, seed=100)
    for t in range(1, 9):
        sigma = s.profile()
        s.iterate()
        if t % 4 == 0:
            V = history_values(g, s.profile())
            sums, counts = s.walker.rollouts(s.profile(), vt, 0.2)  # coverage of one batch
            pred = s._learn_values(s.profile(), 0, 99)
            err = pred - V
            var = np.var(V)
            print(f"value_traversals={vt} t={t} histories covered by one batch {np.mean(counts>0):.2f}; value RMSE {np.sqrt(np.mean(err**2)):.3f} (std of exact values {np.sqrt(var):.3f}); exploitability {evaluate(g, s.average_policy()).exploitability_mbb:.0f} mbb/g", flush=True)
