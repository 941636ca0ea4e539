"""Where a node of sampling on the rules costs its time, against the compiled tree's whole node.

    python -m benchmarks.speed.rules_node_cost
    python -m benchmarks.speed.rules_node_cost --games "goofspiel(cards=6)" --seconds 5

Per game and sampler (external sampling, chance sampling): the sampler on the compiled tree and on the rules,
each for ``--seconds`` CPU seconds (ns per node touched: the walks meet the same nodes), then the rules walk's
parts timed alone, in ns per call, on states the run's own bundle (its function pointers, its code table as the
run left it) produces:

* *child*: the game's ``child`` through its function pointer, a state copied into a row first (what the walk's
  `child` accessor does before settling forced moves);
* *facts*: the mover and the number of moves through their pointers (what `settle` asks of every child);
* *code*: the information-set code through its pointer;
* *probe*: the code's entry in the run's open-addressing table, each probe waiting for the one before (a cache
  miss once the table is large).

*child + facts* is the floor of a rules node: every node entered needs its state, mover and moves from the game
(a decision node adds *code* and *probe*), however little the walk does besides; the compiled tree reads all
four from arrays.

The states are those of random play-outs from the root (every move at its node uniformly), so the mix of
nodes is not exactly the sampler's; the rows say how many of the play-outs' nodes were decisions (a decision
node asks *code* and *probe* once). Target of issue 35, item 5: the rules path at >= 1/3 of the compiled
path's nodes per second for external sampling (a rules node within 3x the compiled node), >= 1/4 for chance
sampling (within 4x).
"""

from __future__ import annotations

import argparse
import os
import time

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402

import rcfr  # noqa: E402
from benchmarks.speed.large_games import parse  # noqa: E402  (same spelling of game specs)
from benchmarks.speed.rules_sampling import SAMPLERS, timed_run  # noqa: E402
from rcfr.games.base import CHANCE, TERMINAL  # noqa: E402
from rcfr.sampling.rules_source import probe, settle  # noqa: E402

GAMES = ["goofspiel(cards=6)", "leduc()", "liars_dice(dice1=2, dice2=1)"]


@njit(cache=True)
def _playouts(source, count, seed):
    """States of random play-outs from the root (`count` nodes, terminal ones excluded), the move taken at each,
    and whether each is a decision node."""
    width = source.states.shape[1]
    out = np.zeros((count, width), np.int64)
    move = np.zeros(count, np.int64)
    decision = np.zeros(count, np.bool_)
    np.random.seed(seed)
    rows, n = source.states, 0
    while n < count:
        for j in range(width):
            rows[1, j] = rows[0, j]
        settle(source, 1)
        while source.row_player[1] != TERMINAL and n < count:
            m = source.row_moves[1]
            k = np.random.randint(m)
            out[n] = rows[1]
            move[n] = k
            decision[n] = source.row_player[1] != CHANCE
            n += 1
            source.fn_child(source.data, rows[1], k, rows[2])
            for j in range(width):
                rows[1, j] = rows[2, j]
            settle(source, 1)
    return out, move, decision


@njit(cache=True)
def _time_child(source, states, move):
    rows, width, total = source.states, states.shape[1], 0.0
    for i in range(states.shape[0]):
        for j in range(width):
            rows[1, j] = states[i, j]
        total += source.fn_child(source.data, rows[1], move[i], rows[2])
    return total


@njit(cache=True)
def _time_facts(source, states):
    total = 0
    for i in range(states.shape[0]):
        total += source.fn_player(source.data, states[i]) + source.fn_moves(source.data, states[i])
    return total


@njit(cache=True)
def _time_code(source, states, decision):
    total = 0
    for i in range(states.shape[0]):
        if decision[i]:
            total += source.fn_code(source.data, states[i])
    return total


@njit(cache=True)
def _codes(source, states, decision):
    out = np.zeros(states.shape[0], np.int64)
    for i in range(states.shape[0]):
        out[i] = source.fn_code(source.data, states[i]) if decision[i] else -1
    return out


@njit(cache=True)
def _time_probe(keys, codes, zero):
    """Probes one after the other: each code waits for the previous entry (``zero`` is 0 at run time), as in a
    walk, where the next node's lookup waits for this one; without the chain, misses would overlap."""
    last = 0
    for i in range(codes.shape[0]):
        if codes[i] >= 0:
            last = probe(keys, codes[i] + (last & zero))
    return last


def per_call_ns(function, args, calls: int, repeats: int = 3) -> float:
    """Best of `repeats` CPU times of function(*args), in ns per call (compiled before timing)."""
    function(*args)
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        function(*args)
        best = min(best, time.process_time() - start)
    return best / max(calls, 1) * 1e9


def measure(text: str, sampler: str, seconds: float, count: int) -> str:
    name, params = parse(text)
    game = rcfr.load_game(name, cache=False, **params)
    rules = rcfr.load_game(name, compiled=False, **params)
    cls = SAMPLERS[sampler]
    cls(game, seed=0).run(1)  # numba code loaded outside the timing
    cls(rules, seed=0).run(1)
    compiled = cls(game, seed=0)
    compiled_ns = timed_run(compiled, seconds) / compiled.nodes_touched * 1e9
    walked = cls(rules, seed=0)
    rules_ns = timed_run(walked, seconds) / walked.nodes_touched * 1e9
    source = walked.buffers.tree
    states, move, decision = _playouts(source, count, 0)
    decisions = int(decision.sum())
    child = per_call_ns(_time_child, (source, states, move), count)
    facts = per_call_ns(_time_facts, (source, states), count)
    code = per_call_ns(_time_code, (source, states, decision), decisions)
    codes = _codes(source, states, decision)
    lookup = per_call_ns(_time_probe, (source.keys, codes, 0), decisions)
    share = decisions / count
    floor = child + facts + share * (code + lookup)
    return (f"| {text} | {sampler} | {compiled_ns:.0f} | {rules_ns:.0f} | {rules_ns / compiled_ns:.1f} | {child:.0f} | {facts:.0f} | "
            f"{code:.0f} | {lookup:.0f} ({source.keys.shape[0]:,} entries) | {share:.2f} | {floor:.0f} | "
            f"{floor / compiled_ns:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="*", default=GAMES)
    parser.add_argument("--samplers", nargs="*", default=["es", "cs"], choices=SAMPLERS)
    parser.add_argument("--seconds", type=float, default=5.0, help="CPU seconds of sampling per path")
    parser.add_argument("--count", type=int, default=1_000_000, help="play-out nodes whose parts are timed")
    args = parser.parse_args()
    print("| game | sampler | compiled ns/node | rules ns/node | ratio | child ns | facts ns | code ns | probe ns | decision share "
          "| floor: child + facts + share x (code + probe) ns | floor / compiled node |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|")
    for text in args.games:
        for sampler in args.samplers:
            print(measure(text, sampler, args.seconds, args.count), flush=True)


if __name__ == "__main__":
    main()
