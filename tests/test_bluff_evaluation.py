"""Bluff beyond the compiled tree: the size rule instead of a dice cap, the walk bounds it declares, and
exact evaluation on its public bid tree (`rcfr.evaluation.bluff`), equal to the compiled path and to
the rules walk (`rcfr.evaluation.rules`) to 1e-12."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rcfr
from rcfr.errors import RulesPathWarning, TooLarge
from rcfr.evaluation import bluff as bluff_eval
from rcfr.evaluation import rules as rules_eval
from rcfr.policy.rules import CodePolicy, infoset_codes
from rcfr.sources.rules import RulesGame

_games: dict = {}


def compiled(name="liars_dice", **params):
    key = (name, tuple(sorted(params.items())))
    if key not in _games:
        _games[key] = rcfr.load_game(name, **params)
    return _games[key]


def assert_close(got, want, tol=1e-12):
    assert abs(got.value - want.value) < tol
    assert abs(got.best_response_values[0] - want.best_response_values[0]) < tol
    assert abs(got.best_response_values[1] - want.best_response_values[1]) < tol
    assert abs(got.exploitability - want.exploitability) < tol


# ---- the size rule ----------------------------------------------------------------------------------
def test_bluff_22_is_walked_by_its_rules_and_refused_compiled_before_any_work(no_enumeration):
    with pytest.raises(TooLarge, match=r"liars_dice\(dice1=2, dice2=2\).*11,098,127,965 histories \(estimated\)"):
        rcfr.load_game("liars_dice", dice1=2, dice2=2, cache=False, compiled=True)
    with pytest.warns(RulesPathWarning, match="Walking it by its rules"):
        game = rcfr.load_game("liars_dice", dice1=2, dice2=2, cache=False)
    assert isinstance(game, RulesGame) and (game.depth, game.widest) == (2 + 24, 24)


@pytest.mark.parametrize("params, message", [
    ({"dice1": 8}, r"'dice1' must be an integer in \[1, 7\], got 8"),
    ({"dice2": 0}, r"'dice2' must be an integer in \[1, 7\], got 0"),
    ({"dice1": 5, "dice2": 5}, r"'dice1' and 'dice2': Bluff\(5, 5\).*overflow int64; allowed"),
    ({"dice1": 2, "dice2": 7}, r"Bluff\(2, 7\).*overflow int64"),
])
def test_dice_beyond_int64_codes_are_refused(params, message):
    with pytest.raises(ValueError, match=message):
        rcfr.make_rules("liars_dice", **params)


@pytest.mark.parametrize("dice", [(1, 7), (4, 5), (5, 4), (4, 4), (3, 3)])
def test_largest_dice_have_int64_codes(dice):
    rules = rcfr.make_rules("liars_dice", dice1=dice[0], dice2=dice[1])
    assert rules.fast().code_space <= 2**63
    assert rules.walk_bounds()[0] == 2 + 6 * sum(dice)


@pytest.mark.parametrize("name, params", [
    ("liars_dice", {}), ("dieroll", {"faces": 2}), ("dieroll", {"faces": 3}),
    ("dieroll", {"faces": 2, "max_raises": 0}), ("dieroll", {"faces": 4, "max_raises": 2}),
    ("dieroll", {"faces": 2, "bets": (1,)}),
])
def test_walk_bounds_are_the_compiled_depth_and_width(name, params):
    game = compiled(name, **params)
    assert game.rules.walk_bounds() == (int(game.depth.max()), int(game.num_children.max()))


def test_walk_bounds_of_bluff_21_follow_the_formula():
    # compiling Bluff(2, 1) takes a minute: the formula is what the compiled Bluff(1, 1) confirms
    for dice in ((2, 1), (1, 2)):
        assert rcfr.make_rules("liars_dice", dice1=dice[0], dice2=dice[1]).walk_bounds() == (2 + 18, 21)


# ---- evaluation on the public tree --------------------------------------------------------------------
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_bluff_11_equals_the_compiled_path(seed):
    game = compiled()
    policy = rcfr.Policy.random(game, seed)
    assert_close(bluff_eval.evaluate(game.rules, CodePolicy.from_policy(policy)), rcfr.evaluate(game, policy))


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), drop=st.floats(0.0, 1.0))
def test_partial_policies_play_uniformly_where_they_lack_a_set(seed, drop):
    game = compiled()
    full = CodePolicy.from_policy(rcfr.Policy.random(game, seed))
    keep = np.random.default_rng(seed).random(full.num_infosets) >= drop
    sizes = np.diff(full.first)[keep]
    rows = np.repeat(keep, np.diff(full.first))
    partial = CodePolicy(game.rules, full.codes[keep], np.concatenate([[0], np.cumsum(sizes)]), full.probs[rows])
    got = bluff_eval.evaluate(game.rules, partial, default="uniform")
    assert_close(got, rules_eval.evaluate(game.rules, partial, default="uniform"))
    assert bluff_eval.walk(game.rules, partial, "uniform")["defaulted"] == int((~keep).sum())
    if not keep.all():
        with pytest.raises(ValueError, match="not in the policy"):
            bluff_eval.evaluate(game.rules, partial)


def test_negative_control_a_changed_row_changes_the_numbers():
    game = compiled()
    policy = CodePolicy.from_policy(rcfr.Policy.random(game, 7))
    probs = policy.probs.copy()
    row = slice(policy.first[5], policy.first[6])
    probs[row] = probs[row][::-1]
    changed = CodePolicy(game.rules, policy.codes, policy.first, probs)
    a, b = bluff_eval.evaluate(game.rules, policy), bluff_eval.evaluate(game.rules, changed)
    assert abs(a.value - b.value) > 1e-6 or abs(a.nash_conv - b.nash_conv) > 1e-6
    assert_close(b, rules_eval.evaluate(game.rules, changed))


def test_whole_policies_are_the_compiled_sets_and_pass_the_checks():
    game = compiled()
    for kind in ("uniform", "random"):
        built = bluff_eval.bluff_policy(game.rules, kind, seed=3)
        assert np.array_equal(built.codes, np.sort(infoset_codes(game)))
        checked = CodePolicy(game.rules, built.codes, built.first, built.probs)  # the row checks pass
        assert_close(bluff_eval.evaluate(game.rules, built), rules_eval.evaluate(game.rules, checked))
    uniform = bluff_eval.bluff_policy(game.rules)
    assert_close(bluff_eval.evaluate(game.rules, uniform), rcfr.evaluate(game, rcfr.Policy.uniform(game)))
    empty = CodePolicy(game.rules, np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0))
    assert_close(bluff_eval.evaluate(game.rules, empty, default="uniform"), bluff_eval.evaluate(game.rules, uniform))


def test_float32_policy_is_close():
    game = compiled()
    for kind in ("uniform", "random"):
        wide = bluff_eval.bluff_policy(game.rules, kind, seed=1)
        narrow = bluff_eval.bluff_policy(game.rules, kind, seed=1, dtype=np.float32)
        assert_close(bluff_eval.evaluate(game.rules, narrow), bluff_eval.evaluate(game.rules, wide), tol=1e-6)


def test_errors_name_the_problem():
    game = compiled()
    other = rcfr.make_rules("liars_dice", dice1=1, dice2=2)
    policy = bluff_eval.bluff_policy(game.rules)
    with pytest.raises(ValueError, match=r"belongs to the game liars_dice\(dice1=1, dice2=1\), not to liars_dice\(dice1=1, dice2=2\)"):
        bluff_eval.evaluate(other, policy)
    with pytest.raises(TypeError, match="built-in Liar's Dice rules"):
        bluff_eval.evaluate(rcfr.make_rules("kuhn"), policy)
    with pytest.raises(ValueError, match="kind must be 'uniform' or 'random', got 'dirichlet'"):
        bluff_eval.bluff_policy(game.rules, "dirichlet")
    with pytest.raises(ValueError, match="dtype must be float64 or float32"):
        bluff_eval.bluff_policy(game.rules, dtype=np.float16)
    with pytest.raises(ValueError, match="default must be None"):
        bluff_eval.evaluate(game.rules, policy, default="zero")


@pytest.mark.slow
@pytest.mark.parametrize("dice", [(2, 1), (1, 2)])
def test_bluff_21_and_12_equal_the_rules_walk(dice):
    rules = rcfr.make_rules("liars_dice", dice1=dice[0], dice2=dice[1])
    policy = bluff_eval.bluff_policy(rules, "random", seed=5)
    assert_close(bluff_eval.evaluate(rules, policy), rules_eval.evaluate(rules, policy))


@pytest.mark.parametrize("dice", [(1, 1), (2, 1), (1, 2)])
def test_uniform_value_equals_the_dice_free_formula(dice):
    from benchmarks.speed import bluff_evaluation as bench
    rules = rcfr.make_rules("liars_dice", dice1=dice[0], dice2=dice[1])
    empty = CodePolicy(rules, np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0))
    got = bluff_eval.walk(rules, empty, default="uniform")
    assert abs(got["value"] - bench.uniform_value_by_theory(*dice)) < 1e-12
    assert got["infosets"] == bluff_eval.num_decision_sets(rules)


def test_whole_policy_pairs_equal_the_closed_form_count():
    from rcfr.abstraction.recall import bluff_counters
    rules = rcfr.make_rules("liars_dice", dice1=2, dice2=1)
    policy = bluff_eval.bluff_policy(rules)
    assert policy.first[-1] == bluff_counters(2, 1, forced=False)
    assert policy.num_infosets == bluff_eval.num_decision_sets(rules) == 1_769_472
