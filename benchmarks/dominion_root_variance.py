"""Why the variance-reduction methods do what they do in solitaire Dominion (docs/search.md, Fig
7.3): the variance, over independent searches, of UCT's estimate of the difference between the two
dearest buys at two decisions (the first turn's buy, and a mid-game buy found by the rollout
policy), for plain UCT, control variates, common random numbers (shared shuffles, recursively) and
both. Also the control variate's own reach: the share of a single return's variance it removes.

    python -m benchmarks.dominion_root_variance [searches] [simulations]
"""

from __future__ import annotations

import sys

import numpy as np

from rcfr.search import MCTS, DominionSolitaire
from rcfr.search.dominion import BUY_PHASE, CARDS, BUY
from rcfr.search.studies import VARIANCE_METHODS


def decisions(g):
    """The first buy with 4 money, and the rollout policy's first buy with 6+ money after turn 6."""
    rng = np.random.default_rng(2)
    first = next(s for s in (g.initial(rng) for _ in range(100)) if g.money(s) == 4)
    s = g.initial(rng)
    while not (s[1] == BUY_PHASE and s[0] <= g.turns - 6 and g.money(s) >= 6):
        s = g.step(s, g.default_policy(s, rng), rng)
    return [("turn 1, 4 money", first), (f"turn {g.turns - s[0] + 1}, {g.money(s)} money", s)]


def main(searches: int = 200, simulations: int = 64):
    g = DominionSolitaire()
    points = decisions(g)
    print(f"variance of the root difference between the two dearest buys, {searches} searches of {simulations} "
          "simulations (UCB c = 100)")
    names = [f"{label}: {CARDS[g.actions(s)[0] - BUY]} - {CARDS[g.actions(s)[1] - BUY]}" for label, s in points]
    print("| method | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(points))
    for label in ("UCT", "CV", "CRN", "CV+CRN"):
        cells = []
        for _, state in points:
            d = []
            for r in range(searches):
                m = MCTS(g, c=100.0, simulations=simulations, leaf="rollout", recommend="mean", seed=r,
                         **VARIANCE_METHODS[label])
                values = m.action_values(state)[1]
                d.append(values[0] - values[1])
            d = np.array(d)
            d = d[~np.isnan(d)]
            cells.append(f"{np.var(d, ddof=1):.2f}")
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
