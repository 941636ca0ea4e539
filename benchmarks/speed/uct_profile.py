"""Where UCT's time goes in the chapter 7 solitaires: rollouts (the compiled kernels) against the
tree (selection, transitions, hashing states into the children, backups), per simulation, for
each variance-reduction method; then the projected hours of Fig 7.3 at the thesis's game counts.

CPU time (the machine is shared: wall time says more about the load than the code). Timers wrap
the game's `rollout`, `apply` and `control` on one searcher; the rest of `run` is tree
bookkeeping. Dominion is also timed on its readable rules (`DominionRules`, whose rollouts run
step by step in Python and so count as tree time).

    python -m benchmarks.speed.uct_profile [--searches 40] [--games 10]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from rcfr.search import MCTS, CantStopSolitaire, DominionSolitaire, PigSolitaire
from rcfr.search.dominion import DominionRules
from rcfr.search.studies import VARIANCE_METHODS, play_solitaire

GAMES = [("pig_solitaire", PigSolitaire(), 100.0, 50_000), ("cantstop_solitaire", CantStopSolitaire(), 5500.0, 10_000),
         ("dominion_solitaire", DominionSolitaire(), 100.0, 10_000),
         ("dominion (readable rules)", DominionRules(), 100.0, 10_000)]


class Timed:
    """Wraps one method of a game instance, adding its CPU time to a counter (outermost calls only:
    the readable `control` calls `apply`)."""

    depth = 0

    def __init__(self, game, name, clock):
        self.f, self.clock, self.name = getattr(game, name), clock, name
        setattr(game, name, self)

    def __call__(self, *args):
        if Timed.depth:
            return self.f(*args)
        Timed.depth += 1
        t = time.process_time()
        try:
            return self.f(*args)
        finally:
            self.clock[self.name] += time.process_time() - t
            Timed.depth -= 1


def profile(game, c, options, searches, simulations=64):
    """Shares of rollout / transition / tree time, and simulations per second, over `searches`
    searches from positions along one rollout-policy game."""
    rng = np.random.default_rng(0)
    states, s = [], game.initial(rng)
    while not game.is_terminal(s) and len(states) < searches:
        states.append(s)
        s = game.step(s, game.default_policy(s, rng), rng)
    states = (states * (searches // max(len(states), 1) + 1))[:searches]
    m = MCTS(game, c=c, simulations=simulations, leaf="rollout", seed=1, **options)
    compiled = m.compiled
    m.run(states[0])                              # compile outside the timing
    clock = {"rollout": 0.0, "apply": 0.0, "control": 0.0}
    wrapped = [Timed(game, name, clock) for name in clock if hasattr(game, name)]
    t = time.process_time()
    for st in states:
        m.run(st)
    total = time.process_time() - t
    for w in wrapped:
        delattr(game, w.name)
    sims = searches * simulations
    rollouts = clock["rollout"] if compiled else 0.0
    transitions = clock["apply"] + clock["control"]
    return {"sims_per_s": sims / total, "rollout": rollouts / total, "transitions": transitions / total,
            "tree": (total - rollouts - transitions) / total, "us_per_sim": 1e6 * total / sims}


def game_seconds(label, game, c, options, simulations, games=10):
    """CPU seconds of one whole game with `simulations` per move."""
    t = time.process_time()
    for k in range(games):
        play_solitaire(game, MCTS(game, c=c, simulations=simulations, leaf="rollout", recommend="mean", seed=k,
                                  **options), k)
    return (time.process_time() - t) / games


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--searches", type=int, default=40)
    parser.add_argument("--games", type=int, default=10, help="games per method and budget for the CPU hours")
    args = parser.parse_args()
    print("| solitaire | method | simulations/s | us/simulation | rollouts | transitions (apply, control) | "
          "tree bookkeeping |")
    print("|---|---|---|---|---|---|---|")
    for label, game, c, _ in GAMES:
        for method in ("UCT", "CV", "CRN") if isinstance(game, DominionSolitaire) or not isinstance(
                game, DominionRules) else ("UCT",):
            r = profile(game, c, VARIANCE_METHODS[method], args.searches)
            print(f"| {label} | {method} | {r['sims_per_s']:,.0f} | {r['us_per_sim']:.0f} | {r['rollout']:.0%} | "
                  f"{r['transitions']:.0%} | {r['tree']:.0%} |")
    print()
    print("| solitaire | method | CPU s per game at 16 / 32 / 64 simulations | thesis games per point | "
          "CPU hours at 16 + 32 + 64 |")
    print("|---|---|---|---|---|")
    panels = {"pig_solitaire": ("UCT", "CV", "CRN", "AV", "CV+CRN"),
              "cantstop_solitaire": ("UCT", "CV", "CRN", "AV", "CV+CRN"),
              "dominion_solitaire": ("UCT", "CV", "CRN", "CV+CRN")}
    for label, game, c, thesis in GAMES[:3]:
        total = 0.0
        for method in panels[label]:
            secs = [game_seconds(label, game, c, VARIANCE_METHODS[method], n, args.games) for n in (16, 32, 64)]
            total += sum(secs) * thesis / 3600
            print(f"| {label} | {method} | {' / '.join(f'{s:.3f}' for s in secs)} | {thesis:,} | "
                  f"{sum(secs) * thesis / 3600:.2f} |")
        print(f"| {label} | **panel** | | | **{total:.1f}** |")

if __name__ == "__main__":
    main()
