"""Exact evaluation against known values and against brute force over the rules."""

import numpy as np
import pytest
from brute import RandomGame, brute_force_best_response, policy_rows, walk_value
from hypothesis import given, settings
from hypothesis import strategies as st

import rcfr


def kuhn_equilibrium(game, alpha):
    """The known one-parameter family of Kuhn equilibria (player 1 bets J with probability alpha)."""
    bet = {"J||": alpha, "Q||": 0.0, "K||": 3 * alpha, "J||c": 1 / 3, "Q||c": 0.0, "K||c": 1.0}
    call = {"J||cr": 0.0, "Q||cr": alpha + 1 / 3, "K||cr": 1.0, "J||r": 0.0, "Q||r": 1 / 3, "K||r": 1.0}
    rows = {k: {"c": 1 - p, "r": p} for k, p in bet.items()}
    rows.update({k: {"f": 1 - p, "c": p} for k, p in call.items()})
    return rcfr.Policy.from_dict(game, {"game": game.rules.description(), "infosets": rows})


@pytest.mark.parametrize("alpha", [0.0, 0.1, 1 / 3])
def test_kuhn_equilibrium_value_and_zero_exploitability(alpha):
    game = rcfr.load_game("kuhn")
    result = rcfr.evaluate(game, kuhn_equilibrium(game, alpha))
    assert result.value == pytest.approx(-1 / 18, abs=1e-12)
    # a best response to an equilibrium gains nothing
    assert result.best_response_values[0] == pytest.approx(-1 / 18, abs=1e-12)
    assert result.best_response_values[1] == pytest.approx(1 / 18, abs=1e-12)
    assert abs(result.exploitability) < 1e-12


@pytest.mark.parametrize("name, params, expected", [
    ("kuhn", {}, 0.458333333333), ("leduc", {}, 2.373611111111), ("leduc", {"merge_suits": True}, 2.373611111111),
])
def test_uniform_policy_exploitability(name, params, expected):
    game = rcfr.load_game(name, **params)
    assert rcfr.exploitability(game, rcfr.Policy.uniform(game)) == pytest.approx(expected, abs=1e-9)


def test_mbb_units():
    game = rcfr.load_game("kuhn")
    policy = rcfr.Policy.uniform(game)
    assert rcfr.exploitability(game, policy, unit="mbb") == pytest.approx(458.333333333)
    with pytest.raises(ValueError, match="unit"):
        rcfr.exploitability(game, policy, unit="bb")


@pytest.mark.parametrize("name, params", [("kuhn", {}), ("ocp", {"cards": 4}), ("leduc", {})])
@pytest.mark.parametrize("seed", [0, 1])
def test_expected_value_matches_a_walk_over_the_rules(name, params, seed):
    game = rcfr.load_game(name, **params)
    policy = rcfr.Policy.random(game, seed)
    assert rcfr.expected_value(game, policy) == pytest.approx(walk_value(game.rules, policy_rows(policy)), abs=1e-12)


@pytest.mark.parametrize("name, params", [("kuhn", {}), ("ocp", {"cards": 4})])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_best_response_matches_brute_force(name, params, seed):
    game = rcfr.load_game(name, **params)
    policy = rcfr.Policy.random(game, seed)
    result = rcfr.evaluate(game, policy)
    for p in (0, 1):
        assert result.best_response_values[p] == pytest.approx(brute_force_best_response(game, policy, p), abs=1e-12)


def test_random_games_have_information_sets_across_depths():
    spans = []
    for seed in range(8):
        game = rcfr.compile_game(RandomGame(seed))
        spans += [len(set(game.depth[game.infoset == i])) for i in range(game.num_infosets)]
    assert max(spans) >= 2  # otherwise the generator would not test what it claims


@settings(max_examples=30, deadline=None)
@given(game_seed=st.integers(0, 10_000), policy_seed=st.integers(0, 10_000))
def test_random_games_against_brute_force(game_seed, policy_seed):
    game = rcfr.compile_game(RandomGame(game_seed))
    policy = rcfr.Policy.random(game, policy_seed)
    result = rcfr.evaluate(game, policy)
    assert result.value == pytest.approx(walk_value(game.rules, policy_rows(policy)), abs=1e-12)
    for p in (0, 1):
        try:
            brute = brute_force_best_response(game, policy, p, limit=500)
        except ValueError:
            continue  # too many pure strategies for this example
        assert result.best_response_values[p] == pytest.approx(brute, abs=1e-12)
    assert result.nash_conv >= -1e-12


@pytest.mark.parametrize("name", ["kuhn", "leduc", "nlocp"])
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_exploitability_is_never_negative(name, seed):
    game = rcfr.load_game(name)
    result = rcfr.evaluate(game, rcfr.Policy.random(game, seed))
    assert result.exploitability >= -1e-12


@pytest.mark.parametrize("player", [0, 1])
def test_best_response_policy_earns_its_value(player):
    game = rcfr.load_game("leduc")
    policy = rcfr.Policy.random(game, 7)
    value, profile = rcfr.best_response(game, policy, player)
    sign = 1 if player == 0 else -1
    assert sign * rcfr.expected_value(game, profile) == pytest.approx(value, abs=1e-12)
    view = game.views[player]
    mine = profile.probs[view.offset:view.offset + view.num_sequences - 1]
    assert set(np.unique(mine)) <= {0.0, 1.0}  # pure
    other = game.views[1 - player]
    theirs = slice(other.offset, other.offset + other.num_sequences - 1)
    assert np.array_equal(profile.probs[theirs], policy.probs[theirs])
    with pytest.raises(ValueError, match="player"):
        rcfr.best_response(game, policy, 2)
