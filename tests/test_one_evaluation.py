"""`rcfr.evaluate`, `rcfr.exploitability`, `rcfr.expected_value` and `rcfr.nash_conv` take either kind of game
`rcfr.load_game` returns: on a game walked by its rules they give the compiled answer (issue 32)."""

from __future__ import annotations

import numpy as np
import pytest

import rcfr
from rcfr import Policy
from rcfr.policy.rules import CodePolicy

GAMES = [("kuhn", {}), ("leduc", {}), ("goofspiel", {"cards": 4}), ("liars_dice", {"dice1": 1, "dice2": 1})]


@pytest.mark.parametrize("name,params", GAMES, ids=[g for g, _ in GAMES])
def test_a_rules_game_gives_the_compiled_answer(name, params):
    compiled = rcfr.load_game(name, **params)
    walked = rcfr.load_game(name, compiled=False, **params)
    solver = rcfr.make_solver("cfr", compiled)
    solver.run(3)
    for policy in (solver.average_policy(), Policy.random(compiled, seed=3)):
        exact = rcfr.evaluate(compiled, policy)
        for given in (policy, CodePolicy.from_policy(policy)):  # a compiled Policy converts
            got = rcfr.evaluate(walked, given)
            assert abs(got.value - exact.value) < 1e-12
            assert np.allclose(got.best_response_values, exact.best_response_values, rtol=0, atol=1e-12)
            assert abs(rcfr.exploitability(walked, given) - exact.exploitability) < 1e-12
            assert abs(rcfr.nash_conv(walked, given) - exact.nash_conv) < 1e-12
            assert abs(rcfr.expected_value(walked, given) - exact.value) < 1e-12
        general = rcfr.evaluate(walked, CodePolicy.from_policy(policy), walk="general")  # Bluff's fast walk forced off
        assert abs(general.exploitability - exact.exploitability) < 1e-12


@pytest.mark.slow  # compiles the sampling driver for the rules source (minutes from a cold cache)
def test_a_solvers_rules_policy_evaluates_without_a_default():
    """Sets a sampled solver never met play uniformly, as on the compiled path."""
    walked = rcfr.load_game("kuhn", compiled=False)
    solver = rcfr.make_solver("os-mccfr", walked, seed=0)
    solver.run(3)
    assert 0 < rcfr.exploitability(walked, solver.average_policy()) < 1


def test_what_either_kind_refuses_is_named():
    compiled, walked = rcfr.load_game("kuhn"), rcfr.load_game("kuhn", compiled=False)
    uniform = Policy.uniform(compiled)
    with pytest.raises(TypeError, match="a game from rcfr.load_game"):
        rcfr.exploitability("kuhn", uniform)
    with pytest.raises(ValueError, match="unknown walk 'fast'"):
        rcfr.evaluate(walked, uniform, walk="fast")
    with pytest.raises(ValueError, match="default must be None or 'uniform'"):
        rcfr.evaluate(compiled, uniform, default="zero")
    with pytest.raises(TypeError, match="best_response_values"):
        rcfr.best_response(walked, uniform, 0)
