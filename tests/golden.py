"""Seeded results of every solver, frozen: refactors must reproduce them exactly.

`python -m tests.golden` rewrites `tests/data/golden.npz` from the current code (do this only when a change
is *meant* to alter results, and say so in the commit); `tests/test_golden.py` compares against it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

PATH = Path(__file__).parent / "data" / "golden.npz"

_TREE = {"name": "best_first", "max_leaves": 16}
_LEAN = dict(regressor=_TREE, features_on_demand=True, targets="stored", capacity=200,
             refit_every=5)

# (key, game name, game params, solver name, solver options, iterations)
CASES = [
    ("cfr/kuhn", "kuhn", {}, "cfr", {}, 50),
    ("cfr-simultaneous/leduc", "leduc", {"merge_suits": True}, "cfr", {"updates": "simultaneous"}, 20),
    ("cfr+/leduc", "leduc", {"merge_suits": True}, "cfr+", {}, 30),
    ("lcfr/kuhn", "kuhn", {}, "lcfr", {}, 30),
    ("dcfr/leduc", "leduc", {"merge_suits": True}, "dcfr", {}, 30),
    ("cscfr/leduc", "leduc", {"merge_suits": True}, "cscfr", {"seed": 3}, 200),
    ("cscfr-paired/bluff11", "liars_dice", {"dice1": 1, "dice2": 1}, "cscfr", {"chance_sampling": "paired", "seed": 1}, 100),
    ("cscfr-common/bluff11", "liars_dice", {"dice1": 1, "dice2": 1}, "cscfr", {"chance_sampling": "common", "updates": "alternating", "seed": 1}, 100),
    ("os/leduc", "leduc", {"merge_suits": True}, "os-mccfr", {"seed": 2}, 2000),
    ("os-simultaneous-rm+/leduc", "leduc", {"merge_suits": True}, "os-mccfr",
     {"updates": "simultaneous", "regret_matching": "rm+", "average_mode": "optimistic", "seed": 2}, 2000),
    ("os-lazy/goofspiel4", "goofspiel", {"cards": 4}, "os-mccfr", {"average_mode": "lazy", "seed": 5}, 2000),
    ("es/leduc", "leduc", {"merge_suits": True}, "es-mccfr", {"seed": 4}, 300),
    ("es-linear/goofspiel4", "goofspiel", {"cards": 4}, "es-mccfr", {"averaging": "linear", "seed": 4}, 200),
    ("vr/leduc", "leduc", {"merge_suits": True}, "vr-mccfr", {"seed": 6}, 2000),
    ("mccfrb-da/leduc", "leduc", {"merge_suits": True}, "mccfrb", {"baseline": "da", "seed": 7}, 2000),
    ("mccfrb-eda/kuhn", "kuhn", {}, "mccfrb", {"baseline": "eda", "seed": 7}, 2000),
    ("pure/leduc", "leduc", {"merge_suits": True}, "pure-cfr", {"seed": 8}, 2000),
    ("as/leduc", "leduc", {"merge_suits": True}, "as-mccfr", {"seed": 9}, 300),
    ("probing/leduc", "leduc", {"merge_suits": True}, "probing-mccfr", {"seed": 10}, 300),
    ("pcs-sample/bluff11", "liars_dice", {"dice1": 1, "dice2": 1}, "pcs-cfr", {"seed": 11}, 100),
    ("pcs-enumerate/leduc", "leduc", {"merge_suits": True}, "pcs-cfr", {"public_chance": "enumerate"}, 20),
    ("es-abstract/leduc", "leduc", {"merge_suits": True}, "es-mccfr",
     {"abstraction": ("ranks", {}), "average_space": "abstract", "seed": 12}, 300),
    ("os-recall/bluff11", "liars_dice", {"dice1": 1, "dice2": 1}, "os-mccfr",
     {"abstraction": ("bluff_last_bids", {"r": 1}), "seed": 13}, 2000),
    ("rcfr/leduc", "leduc", {"merge_suits": True}, "rcfr", {"regressor": _TREE, "features": "poker"}, 10),
    ("rcfr+/leduc", "leduc", {"merge_suits": True}, "rcfr+", {"regressor": _TREE, "features": "poker"}, 10),
    ("sampled-rcfr-es/leduc", "leduc", {"merge_suits": True}, "sampled-rcfr",
     {"regressor": _TREE, "features": "poker", "targets": "reservoir", "refit_every": 5, "seed": 14}, 30),
    ("sampled-rcfr+-os/leduc", "leduc", {"merge_suits": True}, "sampled-rcfr+",
     {"sampler": "outcome", "regressor": _TREE, "features": "poker", "refit_every": 10, "seed": 15}, 60),
    ("lean-rcfr+-es-visited/goofspiel4", "goofspiel", {"cards": 4}, "sampled-rcfr+", dict(_LEAN, features="goofspiel", seed=16), 30),
    ("lean-rcfr+-os-cache/goofspiel4", "goofspiel", {"cards": 4}, "sampled-rcfr+",
     dict(_LEAN, features="goofspiel", sampler="outcome", profile="cache", seed=17), 60),
    ("lean-rcfr+-probing/bluff11", "liars_dice", {"dice1": 1, "dice2": 1}, "sampled-rcfr+",
     dict(_LEAN, features="liars_dice", sampler="probing", seed=18), 30),
]


def run_case(game_name, params, solver_name, options, iterations):
    import rcfr
    from rcfr.abstraction import make_abstraction

    game = rcfr.load_game(game_name, **params)
    options = dict(options)
    if "abstraction" in options:
        name, kw = options["abstraction"]
        options["abstraction"] = make_abstraction(game, name, **kw)
    solver = rcfr.make_solver(solver_name, game, **options)
    solver.run(iterations)
    return np.asarray(solver.average_policy().probs, dtype=np.float64)


def compute(keys=None) -> dict[str, np.ndarray]:
    return {key: run_case(*case) for key, *case in CASES if keys is None or key in keys}


if __name__ == "__main__":
    os.environ.setdefault("RCFR_CACHE", "off")
    results = compute(set(sys.argv[1:]) or None)
    PATH.parent.mkdir(exist_ok=True)
    tmp = PATH.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, **results)
    os.replace(tmp, PATH)
    print(f"wrote {len(results)} arrays to {PATH}")
