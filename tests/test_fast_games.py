"""Fast paths of pam, latent_ttt, phantom_ttt, goofspiel, liars_dice and dieroll: the same arrays and keys as the
rule-object path, and exact size estimates."""

from __future__ import annotations

import numpy as np
import pytest

import rcfr
from rcfr import compiler, tree
from rcfr.games import CHANCE, TERMINAL
from tests.test_phantom import SMALL as PHANTOM_OPENINGS

FAST = [
    ("pam", {"horizon": 1}),
    ("pam", {"horizon": 2, "graph": "circle"}),
    ("pam", {"horizon": 3, "starts": "opposite"}),
    ("goofspiel", {"cards": 4}),
    ("goofspiel", {"cards": 5, "returns": "points", "points_order": "random", "seed": 3}),
    ("goofspiel", {"cards": 1}),
    ("goofspiel", {"cards": 3, "points_order": "ascending"}),
    ("liars_dice", {}),
    ("dieroll", {"faces": 3}),
    ("dieroll", {"faces": 4, "ante": 2, "bets": (1, 3), "max_raises": 2}),
    ("dieroll", {"faces": 2, "bets": (2,)}),
    ("latent_ttt", {"opening": (4, 0, 8)}),
    ("latent_ttt", {"opening": (0, 1, 4, 8)}),
    ("latent_ttt", {"opening": (4, 0, 8, 2)}),
    *[("phantom_ttt", {"opening": opening}) for opening in PHANTOM_OPENINGS],
]


@pytest.mark.parametrize("name, params", FAST)
def test_fast_path_equals_rule_path(name, params):
    rules = rcfr.make_rules(name, **params)
    assert rules.fast() is not None
    slow, fast = tree.compile_game(rules, fast=False), tree.compile_game(rules)
    for key, x in slow.arrays().items():
        y = getattr(fast, key)
        assert x.dtype == y.dtype and np.array_equal(x, y), key
    assert list(slow.infoset_keys) == list(fast.infoset_keys)
    assert list(slow.action_names) == list(fast.action_names)
    assert list(slow.chance_outcome_names) == list(fast.chance_outcome_names)
    estimate = rules.estimate_histories()
    assert estimate is None or estimate == fast.num_histories


@pytest.mark.parametrize("name, params", [("liars_dice", {"dice1": 2, "dice2": 1}), ("liars_dice", {"dice1": 1, "dice2": 2}),
                                          ("goofspiel", {"cards": 7}), ("pam", {"horizon": 5}),
                                          ("pam", {"horizon": 6, "graph": "circle"}), ("latent_ttt", {})])
def test_fast_path_follows_the_rules_on_random_playouts_of_large_games(name, params):
    """Games too large for the rule path: random playouts step both descriptions side by side, and the
    information-set codes met must map one-to-one onto the keys."""
    rules = rcfr.make_rules(name, **params)
    fast = compiler._typed(rules.fast())
    rng = np.random.default_rng(0)
    key_of, code_of = {}, {}
    for _ in range(300):
        state, s = rules.initial_state(), np.zeros(fast.width, np.int64)
        fast.initial(fast.data, s)
        while True:
            who = rules.player(state)
            assert fast.player(fast.data, s) == who
            if who == TERMINAL:
                assert fast.utility(fast.data, s) == rules.utility(state)
                break
            options = rules.chance_outcomes(state) if who == CHANCE else rules.actions(state)
            assert fast.num_children(fast.data, s) == len(options)
            if who != CHANCE:
                code, key = fast.infoset_code(fast.data, s), rules.infoset_key(state)
                assert 0 <= code < fast.code_space
                assert key_of.setdefault(code, key) == key and code_of.setdefault(key, code) == code
            k = int(rng.integers(len(options)))
            out = np.zeros(fast.width, np.int64)
            q = fast.child(fast.data, s, k, out)
            assert q == pytest.approx(options[k][1] if who == CHANCE else 1.0)
            state, s = rules.next_state(state, k), out
    assert len(key_of) > 300
