"""Why the variance-reduction methods differ in solitaire Can't Stop (docs/search.md, Fig 7.3): the
variance of UCT's estimate of the difference between two root actions, over independent searches,
at two early decisions (roll or stop after one move; the choice among three pairing moves), for
plain UCT, control variates, common random numbers (sharing raw throws, and sharing luck ranks)
and ranked antithetic variates. A Fig 7.2 for Can't Stop, without exact values.

    python -m benchmarks.studies.cantstop_root_variance [searches] [simulations]
"""

from __future__ import annotations

import sys

import numpy as np

from rcfr.search import MCTS, CantStopSolitaire
from rcfr.search.cantstop import SORTED

METHODS = (("UCT", {}, False), ("CV", {"control_variates": True}, False),
           ("CRN (raw throws)", {"common_random_numbers": True}, False),
           ("CRN (luck ranks)", {"common_random_numbers": True}, True),
           ("AV (luck ranks)", {"antithetic": True}, True))


def main(searches: int = 300, simulations: int = 64):
    g = CantStopSolitaire()
    pairing = g.apply(g.initial(), 0, SORTED.index((2, 3, 4, 5)))      # pairings (5,9), (6,8), (7,7)
    rollstop = g.apply(pairing, g.actions(pairing)[0], 0)
    print(f"variance of the root difference (action 0 - action 1), {searches} searches of {simulations} simulations")
    print("| method | roll - stop | first - second pairing move |")
    print("|---|---|---|")
    for label, options, ranked in METHODS:
        cells = []
        for state in (rollstop, pairing):
            d = []
            for r in range(searches):
                m = MCTS(g, c=5500, simulations=simulations, leaf="rollout", recommend="mean", seed=r, **options)
                m.ranked = ranked
                values = m.action_values(state)[1]
                d.append(values[0] - values[1])
            cells.append(f"{np.var(d, ddof=1):,.0f}")
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
