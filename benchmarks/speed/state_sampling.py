"""MCCFR through OpenSpiel's state API (the state path, `rcfr.solvers.state_sampling`) beside rcfr's compiled walks:
nodes per CPU second and bytes per information set met (docs/large_games.md, "Huge OpenSpiel games").

    python -m benchmarks.speed.state_sampling                      # the table of docs/large_games.md
    python -m benchmarks.speed.state_sampling --seconds 2 --games kuhn_poker

Rows: the state path on OpenSpiel games; rcfr's compiled ES/OS on ``openspiel:leduc_poker`` (the same game and
seed: the state path touches the same nodes, checked in the last column); rcfr's rules path on its own
``phantom_ttt`` (``load_game("phantom_ttt", compiled=False)``; OpenSpiel's Phantom Tic-Tac-Toe is the same game up
to the information-state encoding). Each row runs chunks of doubling size for ``--seconds`` CPU seconds. Bytes per
set met: the state path's table (`InfosetTable.nbytes`: dict, key strings, arrays) and, where it met 1,000 sets or
more, in a second run of as many iterations under tracemalloc, every Python allocation still alive after it; the
rules path's arrays (`RulesBuffers.nbytes`, capacity).
"""

from __future__ import annotations

import argparse
import os
import tracemalloc
import warnings

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import rcfr  # noqa: E402
from benchmarks.speed.rules_sampling import timed_run  # noqa: E402  (the same chunked CPU-second runs)
from rcfr.solvers import mccfr  # noqa: E402
from rcfr.solvers.state_sampling import StateMCCFR  # noqa: E402

GAMES = ["kuhn_poker", "leduc_poker", "phantom_ttt", "liars_dice(numdice=2)", "dark_hex"]
SAMPLERS = {"es": ("external", mccfr.ExternalSamplingMCCFR), "os": ("outcome", mccfr.OutcomeSamplingMCCFR)}


def traced_bytes(game: str, sampler: str, iterations: int) -> int:
    """Python memory alive after `iterations` iterations of a fresh solver (tracemalloc)."""
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    solver = StateMCCFR(game, sampler=sampler, seed=0).run(iterations)
    alive = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return alive // max(solver.table.num_sets, 1)


def row(game, path, key, solver, seconds, sets, table_bytes, traced, same="") -> str:
    rate = solver.nodes_touched / seconds
    return (f"| {game} | {path} | {key} | {solver.iteration:,} | {seconds:.1f} | {solver.nodes_touched:,} | "
            f"{rate:,.0f} | {sets:,} | {table_bytes} | {traced} | {same} |")


def state_rows(game: str, keys: list[str], seconds: float) -> dict[str, StateMCCFR]:
    solvers = {}
    for key in keys:
        sampler = SAMPLERS[key][0]
        solver = solvers[key] = StateMCCFR(game, sampler=sampler, seed=0)
        spent = timed_run(solver, seconds)
        t = solver.table
        traced = traced_bytes(game, sampler, solver.iteration) if t.num_sets >= 1000 else "-"  # slow: skip tiny
        print(row(game, "state", key, solver, spent, t.num_sets, f"{t.nbytes() / max(t.num_sets, 1):.0f}", traced),
              flush=True)
    return solvers


def compiled_rows(keys: list[str], seconds: float, state: dict[str, StateMCCFR]) -> None:
    game = rcfr.load_game("openspiel:leduc_poker")
    for key in keys:
        cls = SAMPLERS[key][1]
        cls(game, seed=0).run(1)  # numba code loaded outside the timing
        solver = cls(game, seed=0)
        spent = timed_run(solver, seconds)
        same = "-"
        if key in state:
            check = StateMCCFR("leduc_poker", sampler=SAMPLERS[key][0], seed=0).run(state[key].iteration)
            twin = cls(game, seed=0)
            twin.run(check.iteration)
            same = "yes" if twin.nodes_touched == check.nodes_touched else "NO"
        print(row("leduc_poker", "compiled", key, solver, spent, game.num_infosets, "-", "-", same), flush=True)


def rules_rows(keys: list[str], seconds: float) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        game = rcfr.load_game("phantom_ttt", compiled=False)
    for key in keys:
        cls = SAMPLERS[key][1]
        cls(game, seed=0).run(1)  # numba code loaded outside the timing
        solver = cls(game, seed=0)
        spent = timed_run(solver, seconds)
        b = solver.buffers
        print(row("phantom_ttt (rcfr)", "rules", key, solver, spent, b.num_sets,
                  f"{b.nbytes() / max(b.num_sets, 1):.0f}", "-"), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="*", default=GAMES, help="OpenSpiel game strings (state path)")
    parser.add_argument("--samplers", nargs="*", default=list(SAMPLERS), choices=SAMPLERS)
    parser.add_argument("--seconds", type=float, default=5.0, help="CPU seconds per row (at least one iteration)")
    parser.add_argument("--no-rcfr", action="store_true", help="skip the compiled and rules-path rows")
    args = parser.parse_args()
    print("| game | path | sampler | iterations | CPU s | nodes | nodes/CPU s | sets met | bytes/set (table) | "
          "bytes/set (traced) | same nodes |\n|---|---|---|---|---|---|---|---|---|---|---|")
    state = {}
    for game in args.games:
        solvers = state_rows(game, args.samplers, args.seconds)
        if game == "leduc_poker":
            state = solvers
    if not args.no_rcfr:
        compiled_rows(args.samplers, args.seconds, state)
        rules_rows(args.samplers, args.seconds)


if __name__ == "__main__":
    main()
