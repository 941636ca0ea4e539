"""Issue 32 item 7: bad inputs at the rules path, the approximate evaluation, the neural family and the
searches, each silently wrong, a raw Python error or a hang before, now refused before any work with an
error naming the parameter and what is allowed (or, where the behaviour was wrong, now right)."""

import math

import numpy as np
import pytest

from rcfr.search.dominion import DECK, DominionSolitaire
from rcfr.search.mcts import MCTS
from rcfr.search.minimax import StarSearch
from rcfr.search.pig import Pig


# ---- searches ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pig():
    game = Pig()
    return game, game.initial(np.random.default_rng(0))


def test_mcts_with_a_budget_too_small_for_one_simulation_still_runs_one(pig):
    game, state = pig
    action, value, simulations = MCTS(game, seconds=1e-9).decide(state)  # was (0, nan, 0)
    assert simulations >= 1 and math.isfinite(value)


@pytest.mark.parametrize("options, match", [
    ({"c": math.nan}, r"c \(the UCB exploration constant\) must be a finite number in \[0, inf\)"),
    ({"c": math.inf}, r"c \(the UCB exploration constant\) must be a finite number"),
    ({"c": "100"}, r"c \(the UCB exploration constant\) must be a finite number"),
    ({"c": -1.0}, r"c \(the UCB exploration constant\) must be a finite number"),
    ({"widening": (math.nan, 0.5)}, r"widening C must be a finite number in \(0, inf\)"),
    ({"widening": (1.0, 1.5)}, r"widening alpha must be a finite number in \[0, 1\]"),
    ({"widening": 2.0}, r"widening must be a pair \(C > 0, 0 <= alpha <= 1\) or None"),
    ({"seed": -1}, r"seed must be an integer >= 0, got -1"),
    ({"cv_online": 0}, r"cv_online must be an integer >= 1"),
])
def test_mcts_options_are_checked_by_name(pig, options, match):
    with pytest.raises(ValueError, match=match):
        MCTS(pig[0], simulations=10, **options)


@pytest.mark.parametrize("options, match", [
    ({"depth": 1.5}, r"depth must be an integer >= 1, got 1.5"),
    ({"depth": 1, "seed": -1}, r"seed must be an integer >= 0, got -1"),
    ({"seconds": math.nan}, r"seconds must be a finite number in \(0, inf\)"),
    ({"nodes": 0}, r"nodes must be an integer >= 1"),
    ({"depth": 1, "width": True}, r"width must be an integer >= 1"),
])
def test_star_search_options_are_checked_by_name(pig, options, match):
    with pytest.raises(ValueError, match=match):
        StarSearch(pig[0], **options)


def test_dominion_turns_beyond_any_game_are_refused_by_name():
    with pytest.raises(ValueError, match=r"dominion_solitaire turns must be an integer in \[1, 10,000\], got 9223"):
        DominionSolitaire(turns=2 ** 63)  # was OverflowError: Python int too large to convert to C long


@pytest.mark.parametrize("field, value, match", [(DECK, -3, "deck Copper -3"), (1, 7, "phase 7"),
                                                 (0, 99, "turns left 99 > 3")])
def test_dominion_searches_refuse_a_state_that_cannot_be(field, value, match):
    game = DominionSolitaire(turns=3)
    state = list(game.initial(np.random.default_rng(0)))
    state[field] = value
    for searcher in (MCTS(game, simulations=3), StarSearch(game, depth=1)):
        with pytest.raises(ValueError, match=f"not a dominion_solitaire\\(turns=3\\) state: {match}"):
            searcher.decide(tuple(state))  # -3 Coppers in the deck was searched
    with pytest.raises(ValueError, match="must be a tuple of 85 integers"):
        MCTS(game, simulations=3).decide(tuple(state[:-1]))


# ---- policies ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def kuhn():
    import rcfr
    return rcfr.load_game("kuhn")


def test_a_policy_taken_over_without_a_copy_cannot_be_changed_behind_its_back(kuhn):
    from rcfr import Policy
    owner = np.array(Policy.uniform(kuhn).probs)
    policy = Policy(kuhn, owner[:], copy=False)  # a view: was frozen while its base stayed writable
    owner[0] = math.nan
    assert np.isfinite(policy.probs).all()
    taken = np.array(Policy.uniform(kuhn).probs)
    policy = Policy(kuhn, taken, copy=False)  # an array owning its memory is taken over, frozen
    with pytest.raises(ValueError, match="read-only"):
        taken[0] = 5.0
    assert policy.probs[0] == 0.5


def _shifted(policy, shift):
    """The same rows under codes that are not the game's (all but the first row moved by `shift`)."""
    from rcfr.rules.policy import CodePolicy
    codes = policy.codes.copy()
    codes[1:] += shift
    order = np.argsort(codes)
    rows = [policy.probs[policy.first[i]:policy.first[i + 1]] for i in order]
    first = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
    from rcfr.games import make_rules
    return CodePolicy(make_rules("kuhn"), codes[order], first, np.concatenate(rows))


def test_code_policy_rows_that_match_no_information_set_are_refused(kuhn):
    from rcfr import Policy, PolicyError
    from rcfr.rules import evaluation
    from rcfr.rules.policy import CodePolicy
    exact = CodePolicy.from_policy(Policy.random(kuhn, seed=1))
    assert evaluation.exploitability(kuhn.rules, exact) == pytest.approx(rcfr_exploitability(kuhn, exact))
    stray = _shifted(exact, 1 << 40)
    with pytest.raises(PolicyError, match=r"11 of the 12 rows of this code policy of kuhn\(\) match no information"):
        evaluation.exploitability(kuhn.rules, stray, default="uniform")  # was: scored as the uniform policy
    with pytest.raises(PolicyError, match="11 of the 12 rows .* match no information set"):
        stray.to_policy(kuhn, default="uniform")


def rcfr_exploitability(game, code_policy):
    import rcfr
    return rcfr.exploitability(game, code_policy.to_policy(game))
