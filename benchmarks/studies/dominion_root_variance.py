"""Why the variance-reduction methods do what they do in solitaire Dominion (docs/search.md, Fig
7.3): the variance, over independent searches, of UCT's estimate of the difference between the two
dearest buys at two decisions (the first turn's buy, and a mid-game buy found by the rollout
policy), for plain UCT, control variates, common random numbers (shared shuffles, recursively) and
both; then how much any sharing could remove: the variance of the difference of two single
returns under independent luck, shared shuffles, and shared shuffles plus policy uniforms.

    python -m benchmarks.studies.dominion_root_variance [searches] [simulations]
"""

from __future__ import annotations

import sys

import numpy as np

from rcfr.search import MCTS, DominionSolitaire
from rcfr.search.dominion import BUY, BUY_PHASE, CARDS, SEED_SPACE
from rcfr.search.dominion_compiled import rollout
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

    shared_luck(g, points[0][1])


def shared_luck(g, state, pairs: int = 3000):
    """How much sharing can remove at all: the variance of (return after the dearest buy) - (return
    after the second), one rollout each, with independent luck, with the same shuffle seeds (what
    CRN shares), and with the same seeds and the same policy uniforms."""
    a, b = g.actions(state)[:2]
    rng = np.random.default_rng(0)

    def ret(action, draws, u):
        nxt = np.array(g.apply(state, action, int(draws[0])), dtype=np.int64)
        return rollout(nxt, draws, 1, True, u, 0, False)[0]

    cells = {"independent": [], "same shuffles": [], "same shuffles and policy uniforms": []}
    for _ in range(pairs):
        d1, d2 = rng.integers(SEED_SPACE, size=600), rng.integers(SEED_SPACE, size=600)
        u1, u2 = rng.random(600), rng.random(600)
        cells["independent"].append(ret(a, d1, u1) - ret(b, d2, u2))
        cells["same shuffles"].append(ret(a, d1, u1) - ret(b, d1, u2))
        cells["same shuffles and policy uniforms"].append(ret(a, d1, u1) - ret(b, d1, u1))
    print()
    print(f"variance of one rollout's return after {CARDS[a - BUY]} minus one after {CARDS[b - BUY]}, "
          f"{pairs} pairs")
    print("| luck | mean difference | variance |")
    print("|---|---|---|")
    for label, d in cells.items():
        print(f"| {label} | {np.mean(d):.2f} | {np.var(d, ddof=1):.2f} |")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
