"""Liar's Dice / Bluff, imperfect-information Goofspiel and Die-Roll Poker: rules, sizes, exact best
responses with hidden actions, and Monte Carlo CFR on them."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import rcfr
from rcfr import Policy, best_response, evaluate, expected_value, make_solver
from rcfr.sampling import estimate_regrets, exact_regrets


def _history(game, names):
    """The history reached by following chance-outcome / action names from the root."""
    h = 0
    for name in names:
        children = range(game.first_child[h], game.first_child[h] + game.num_children[h])
        if game.player[h] == rcfr.games.CHANCE:
            h = next(c for c in children if game.chance_outcome_names[c] == name)
        else:
            h = game.first_child[h] + game.actions_of(game.infoset[h]).index(name)
    return h


def test_bluff_sizes_and_rules():
    game = rcfr.load_game("liars_dice", dice1=1, dice2=1)
    # 24,576 and 49,140 (REFERENCE.md) count the forced "bluff" after the top bid 2x*, collapsed here
    assert game.num_infosets == 24_576 - 12_288 and game.num_sequences == 49_140 - 12_288
    # player 0 rolls a 3, player 1 a star: two dice count as 3s (the star is wild), one as a 4
    assert game.utility[_history(game, ["3", "*", "1x3", "2x3", "bluff"])] == -1.0  # p0 called a true bid
    assert game.utility[_history(game, ["3", "*", "1x3", "2x4", "bluff"])] == 1.0  # p1's bid was false
    assert game.utility[_history(game, ["3", "*", "2x*"])] == -1.0  # one star only: p0 bluffed (forced call)
    assert game.utility[_history(game, ["3", "*", "1x*", "bluff"])] == 1.0  # p1 called a true bid
    h = _history(game, ["3", "*", "1x5"])
    assert game.infoset_keys[game.infoset[h]] == "*|1x5"
    assert game.actions_of(game.infoset[h])[-1] == "bluff" and "1x5" not in game.actions_of(game.infoset[h])


def test_bluff_multiset_rolls():
    rules = rcfr.make_rules("liars_dice", dice1=2, dice2=1)
    outcomes = rules.chance_outcomes(rules.initial_state())
    assert len(outcomes) == 21 and sum(p for _, p in outcomes) == pytest.approx(1.0)
    assert dict(outcomes)["33"] == pytest.approx(1 / 36) and dict(outcomes)["35"] == pytest.approx(2 / 36)


def test_goofspiel_sizes_and_rules():
    assert rcfr.load_game("goofspiel", cards=5).num_infosets == 2_124  # 9,948 with the forced last bids
    game = rcfr.load_game("goofspiel", cards=3)
    # bids (3 vs 1: p0 takes 3 points), (1 vs 2: p1 takes 2), forced (2 vs 3: p1 takes 1): 3 - 3 = tie
    assert game.utility[_history(game, ["3", "1", "1", "2"])] == 0.0
    points = rcfr.load_game("goofspiel", cards=3, returns="points")
    assert points.utility[_history(points, ["2", "1", "3", "3"])] == 3 - 1  # then forced 1 vs 2
    # player 1 does not see player 0's card; player 0 later sees only the result
    assert game.infoset[_history(game, ["1"])] == game.infoset[_history(game, ["3"])]
    assert game.infoset_keys[game.infoset[_history(game, ["3", "1"])]] == "0:3|W"
    assert game.infoset[_history(game, ["3", "1"])] == game.infoset[_history(game, ["3", "2"])]


def test_goofspiel_is_symmetric_with_value_zero():
    game = rcfr.load_game("goofspiel", cards=3)
    solver = make_solver("cfr+", game).run(300)
    result = evaluate(game, solver.average_policy())
    assert result.exploitability < 1e-3 and abs(result.value) < 2e-3


def test_dieroll_sizes_and_rules():
    game = rcfr.load_game("dieroll")
    assert game.infosets_per_player == (6 * 3 + 36 * 5 * 3,) * 2
    # dice 6,1 (p0) and 2,4 (p1): sums 7 vs 6, both call through: p0 wins the ante
    assert game.utility[_history(game, ["6", "2", "c", "c", "1", "4", "c", "c"])] == 1.0
    assert game.utility[_history(game, ["6", "2", "r", "c", "1", "6", "r", "c"])] == -(1 + 2 + 4)
    h = _history(game, ["6", "2", "r", "c", "1", "6", "r"])
    assert game.infoset_keys[game.infoset[h]] == "26|rc/r"
    with pytest.raises(ValueError, match="faces"):
        rcfr.load_game("dieroll", faces=1)


def _pure_strategies(game, player):
    mine = np.flatnonzero(game.infoset_player == player)
    for choice in itertools.product(*[range(game.infoset_num_actions[i]) for i in mine]):
        yield mine, choice


@pytest.mark.parametrize("player", [0, 1])
def test_best_response_is_exact_with_hidden_actions(player):
    """Brute force over every pure strategy on Goofspiel(3), where bids are hidden."""
    game = rcfr.load_game("goofspiel", cards=3, returns="points")
    policy = Policy.random(game, seed=4)
    sign = 1.0 if player == 0 else -1.0
    best = -np.inf
    for mine, choice in _pure_strategies(game, player):
        probs = policy.probs.copy()
        for i, a in zip(mine, choice):
            first = game.infoset_first_seq[i]
            probs[first:first + game.infoset_num_actions[i]] = 0.0
            probs[first + a] = 1.0
        best = max(best, sign * expected_value(game, Policy(game, probs)))
    assert best_response(game, policy, player)[0] == pytest.approx(best, abs=1e-12)


@pytest.mark.parametrize("sampler,traverser,samples", [("chance", 2, 20_000), ("external", 0, 100_000),
                                                       ("external", 1, 100_000), ("outcome", 0, 400_000)])
def test_sampled_regrets_unbiased_with_hidden_actions(sampler, traverser, samples):
    """Goofspiel reaches the same information set through several histories in one traversal."""
    game = rcfr.load_game("goofspiel", cards=3)
    policy = Policy.random(game, seed=2)
    est = estimate_regrets(game, sampler, policy, traverser, samples, seed=5)
    exact = sum(exact_regrets(game, policy, p) for p in ((0, 1) if traverser == 2 else (traverser,)))
    z = np.abs(est.mean - exact) / np.maximum(est.stderr, 1e-12)
    assert z.max() < 6.0 and np.linalg.norm(est.mean - exact) < 0.15 * np.linalg.norm(exact)


@pytest.mark.parametrize("name,params,solver,iterations", [
    ("goofspiel", {"cards": 4}, "es-mccfr", 5_000), ("dieroll", {}, "es-mccfr", 5_000),
    ("liars_dice", {}, "es-mccfr", 5_000)])
def test_mccfr_improves_on_new_games(name, params, solver, iterations):
    game = rcfr.load_game(name, **params)
    start = evaluate(game, Policy.uniform(game)).exploitability
    result = make_solver(solver, game, seed=0).run(iterations)
    assert evaluate(game, result.average_policy()).exploitability < 0.5 * start


def test_a_matrix_game_has_its_known_values_and_refuses_a_bad_matrix():
    """Rock-paper-scissors: uniform is the equilibrium (exploitability 0), always-rock is beaten by 1 at each
    seat; in [[1, 2], [0, 3]] the first column dominates, so the game is worth 1 and CFR+ finds it."""
    from rcfr.games import MatrixGame
    rps = rcfr.compile_game(MatrixGame([[0, -1, 1], [1, 0, -1], [-1, 1, 0]]))
    assert rcfr.exploitability(rps, Policy.uniform(rps)) == pytest.approx(0.0, abs=1e-15)
    rock = Policy.from_local(rps, [np.array([1.0, 1.0, 0.0, 0.0]), np.array([1.0, 1.0, 0.0, 0.0])])
    assert rcfr.exploitability(rps, rock) == pytest.approx(1.0, abs=1e-15)
    dominated = rcfr.compile_game(MatrixGame([[1, 2], [0, 3]]))
    average = make_solver("cfr+", dominated).run(200).average_policy()
    assert expected_value(dominated, average) == pytest.approx(1.0, abs=1e-3)
    for bad in ([[1.0, float("nan")]], [[]], [1.0, 2.0]):
        with pytest.raises(ValueError, match="payoff must be"):
            MatrixGame(bad)
