"""Fast paths of pam, latent_ttt, goofspiel, liars_dice and dieroll: the same arrays and keys as the
rule-object path, and exact size estimates."""

from __future__ import annotations

import numpy as np
import pytest

import rcfr
from rcfr import tree

FAST = [
    ("pam", {"horizon": 1}),
    ("pam", {"horizon": 2, "graph": "circle"}),
    ("pam", {"horizon": 3, "starts": "opposite"}),
    ("latent_ttt", {"opening": (4, 0, 8)}),
    ("latent_ttt", {"opening": (0, 1, 4, 8)}),
    ("latent_ttt", {"opening": (4, 0, 8, 2)}),
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
