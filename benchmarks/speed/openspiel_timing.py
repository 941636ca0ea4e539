"""rcfr vs OpenSpiel on the same OpenSpiel games, side by side: CFR+ time per iteration, time of one
exact exploitability, and the exploitability each reaches after the same number of iterations.
OpenSpiel runs its C++ `pyspiel.CFRPlusSolver` and `pyspiel.exploitability`; rcfr runs `cfr+` and
`rcfr.exploitability` on the game compiled from OpenSpiel (`load_game("openspiel:...")`). The last
column scores OpenSpiel's own average policy with rcfr, minus OpenSpiel's score of it.

    PYTHONPATH=. python -m benchmarks.speed.openspiel_timing [--quick]
"""

from __future__ import annotations

import sys
import time

import rcfr
from rcfr.games.openspiel import pyspiel_module

#: (OpenSpiel game string, CFR+ iterations)
GAMES = [("kuhn_poker", 1000), ("leduc_poker", 200), ("liars_dice(numdice=1)", 20)]


def seconds(fn, *args, **kwargs):
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - start, result


def main(quick: bool = False) -> None:
    pyspiel = pyspiel_module()
    from open_spiel.python.policy import pyspiel_policy_to_python_policy
    print("| game | histories | rcfr compile (s) | iterations | rcfr CFR+ (ms/it) | OpenSpiel CFR+ (ms/it) "
          "| rcfr exploitability (ms) | OpenSpiel exploitability (ms) | exploitability rcfr / OpenSpiel "
          "| rcfr - OpenSpiel on OpenSpiel's policy |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for name, iterations in GAMES:
        iterations = max(1, iterations // 10) if quick else iterations
        compile_s, game = seconds(rcfr.load_game, f"openspiel:{name}", cache=False)
        solver = rcfr.make_solver("cfr+", game)
        solver.run(1)  # numba kernels load before timing
        ours_s, _ = seconds(solver.run, iterations - 1)
        policy = solver.average_policy()
        rcfr.exploitability(game, policy)
        ours_eval_s, ours_expl = seconds(rcfr.exploitability, game, policy)

        os_game = game.rules.game
        theirs = pyspiel.CFRPlusSolver(os_game)
        theirs_s = 0.0
        for _ in range(iterations):
            elapsed, _ = seconds(theirs.evaluate_and_update_policy)
            theirs_s += elapsed
        average = theirs.average_policy()
        theirs_eval_s, theirs_expl = seconds(pyspiel.exploitability, os_game, average)
        tabular = pyspiel_policy_to_python_policy(os_game, theirs.tabular_average_policy())
        scored = rcfr.exploitability(game, rcfr.Policy.from_openspiel(game, tabular))
        print(f"| {name} | {game.num_histories:,} | {compile_s:.3f} | {iterations} | "
              f"{1e3 * ours_s / max(iterations - 1, 1):.3f} | {1e3 * theirs_s / iterations:.2f} | "
              f"{1e3 * ours_eval_s:.2f} | {1e3 * theirs_eval_s:.1f} | {ours_expl:.4g} / {theirs_expl:.4g} | "
              f"{scored - theirs_expl:.1e} |")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv[1:])
