"""How fast the depth-first walks over a game's rules go on Phantom Tic-Tac-Toe, and what costs the time.

    python -m benchmarks.speed.rules_walk_rate                 # openings (4, 0, 8), (4, 0), (0, 1)
    python -m benchmarks.speed.rules_walk_rate --openings 4,0 4

Rows, in histories per CPU second (one thread; numba code compiled before timing):

* *evaluation*: `rcfr.evaluation.rules.walk` with ``default="uniform"`` and an empty policy (every set
  uniform, the cheapest policy to get for the full game);
* *count_sizes*: `rcfr.sources.sizes.count_sizes`;
* *bare*: a minimal depth-first walk calling ``player``, ``num_children``, ``infoset_code``, ``utility``
  and ``child`` once per node and nothing else, with the functions as typed pointers (what the two walks
  above receive) or as numba dispatcher arguments (numba specialises the walk per game), without and with
  forced moves collapsed by `rcfr.compiler._settle` (which the real walks do); without collapse the bare
  walk visits more nodes (4,896,231 on (4, 0)), and its rate is per node.

The full game has 1.64e10 histories (forced moves collapsed): divide by the rate for one walk's time.
"""

from __future__ import annotations

import argparse
import os
import time

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402
from numba import types as nb  # noqa: E402

from rcfr.compiler import _settle  # noqa: E402

FULL_GAME = 16_363_068_211


def _bare(player, num_children, child, infoset_code, utility, data, s0, collapse):
    """One call of each function per node, a stack of states, nothing kept: the floor of any walk."""
    width = s0.shape[0]
    states = np.empty((64, width), np.int64)
    nxt = np.zeros(64, np.int64)
    kids = np.zeros(64, np.int64)
    tmp = np.empty(width, np.int64)
    states[0] = s0
    d = 0
    fresh = True
    n = 0
    acc = 0
    while d >= 0:
        if fresh:
            fresh = False
            n += 1
            s = states[d]
            nxt[d] = 0
            if player(data, s) < 0:
                acc += np.int64(utility(data, s))
                d -= 1
                continue
            kids[d] = num_children(data, s)
            acc += infoset_code(data, s) & 1
        if nxt[d] == kids[d]:
            d -= 1
            continue
        child(data, states[d], nxt[d], states[d + 1])
        if collapse:
            _settle(player, num_children, child, data, states[d + 1], tmp)
        nxt[d] += 1
        d += 1
        fresh = True
    return n, acc


def main() -> None:
    import rcfr
    from rcfr.compiler import _typed
    from rcfr.evaluation import rules as evaluation
    from rcfr.games.fast import DATA
    from rcfr.games.fast import FUNCTION_TYPES as F
    from rcfr.policy.rules import CodePolicy
    from rcfr.sources.sizes import count_sizes

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--openings", nargs="+", default=["4,0,8", "4,0", "0,1"])
    args = parser.parse_args()
    openings = [tuple(int(c) for c in o.split(",")) for o in args.openings]

    pointer_sig = nb.UniTuple(nb.int64, 2)(F["player"], F["num_children"], F["child"], F["infoset_code"],
                                           F["utility"], DATA, nb.int64[::1], nb.boolean)
    variants = {"pointers": njit(pointer_sig)(_bare), "dispatchers": njit(_bare)}

    def cpu(fn, *a):
        start = time.process_time()
        result = fn(*a)
        return result, time.process_time() - start

    warm = rcfr.make_rules("phantom_ttt", opening=(4, 0, 8, 2, 1))
    empty = (np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0))
    evaluation.walk(warm, CodePolicy(warm, *empty), default="uniform")
    count_sizes(warm)
    print(f"load average {os.getloadavg()[0]:.2f}; histories per CPU second (millions); full game = "
          f"{FULL_GAME:.3g} histories")
    print("| opening | histories | evaluation | count_sizes | bare, pointers | bare, dispatchers | "
          "bare + collapse, pointers | bare + collapse, dispatchers |")
    print("|---|---|---|---|---|---|---|---|")
    for op in openings:
        rules = rcfr.make_rules("phantom_ttt", opening=op)
        raw, t_eval = cpu(evaluation.walk, rules, CodePolicy(rules, *empty), "uniform")
        sizes, t_sizes = cpu(count_sizes, rules)
        assert sizes.histories == raw["histories"]
        f = _typed(rules.fast())
        s0 = np.empty(f.width, np.int64)
        f.initial(f.data, s0)
        fns = (f.player, f.num_children, f.child, f.infoset_code, f.utility, f.data, s0)
        rates = []
        for collapse in (False, True):
            for name, walk in variants.items():
                walk(*fns, collapse)  # compiled (the dispatcher variant per game) before timing
                (n, _), t = cpu(walk, *fns, collapse)
                if collapse:
                    assert n == sizes.histories
                rates.append(n / t / 1e6)
        h = sizes.histories
        print(f"| {op} | {h:,} | {h / t_eval / 1e6:.2f} | {h / t_sizes / 1e6:.2f} | "
              + " | ".join(f"{r:.2f}" for r in rates) + " |", flush=True)


if __name__ == "__main__":
    main()
