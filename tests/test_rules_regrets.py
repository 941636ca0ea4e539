"""The full-game regret of played profiles over the rules (`rcfr.regrets.rules.RulesFullRegret`) equals the compiled
tree's (`rcfr.regrets.FullRegret`) to 1e-12: random profiles, abstract profiles, checkpoints."""

import numpy as np
import pytest

import rcfr
from rcfr.abstraction import make_abstraction
from rcfr.policy.rules import CodePolicy
from rcfr.regrets import FullRegret
from rcfr.regrets.rules import RulesFullRegret

GAMES = [("liars_dice", {"dice1": 1, "dice2": 1}), ("goofspiel", {"cards": 4}), ("kuhn", {}),
         ("latent_ttt", {"opening": (4, 0, 1, 2)})]


def _profiles(game, count, seed):
    return [rcfr.Policy.random(game, seed=seed + t) for t in range(count)]


@pytest.mark.parametrize("name, params", GAMES)
def test_random_profiles_give_the_compiled_regrets(name, params):
    game = rcfr.load_game(name, **params)
    compiled, walked = FullRegret(game), RulesFullRegret(game.rules)
    for policy in _profiles(game, 5, seed=11):
        compiled.add(policy)
        walked.add(CodePolicy.from_policy(policy))
    np.testing.assert_allclose(walked.average_regrets(), compiled.average_regrets(), rtol=0, atol=1e-12)
    assert walked.positive_sum() == pytest.approx(compiled.positive_sum(), abs=1e-12) and compiled.positive_sum() > 0


@pytest.mark.slow  # runs the sampling driver on the rules' state source (a minute to compile cold)
def test_abstract_profiles_are_measured_in_the_full_game():
    """Profiles of Bluff(1,1) remembering the last bid: rows by abstract key, sums by full set, as the compiled
    tracker measures the expanded profiles."""
    rules_game = rcfr.load_game("liars_dice", dice1=1, dice2=1, compiled=False)
    game = rcfr.load_game("liars_dice", dice1=1, dice2=1)
    abstraction = make_abstraction(rules_game, "bluff_last_bids", r=1)
    solver = rcfr.solvers.OutcomeSamplingMCCFR(rules_game, abstraction=abstraction, average_space="abstract", seed=2)
    compiled, walked = FullRegret(game), RulesFullRegret(game.rules)
    for _ in range(4):
        solver.run(50)
        played = solver.current_policy()
        walked.add(played)
        compiled.add(played.to_policy(game, default="uniform"))
    assert walked.positive_sum() == pytest.approx(compiled.positive_sum(), abs=1e-12)


def test_resumes_and_refuses_what_it_cannot_measure():
    game = rcfr.load_game("goofspiel", cards=4)
    profiles = [CodePolicy.from_policy(p) for p in _profiles(game, 4, seed=3)]
    straight, resumed = RulesFullRegret(game.rules), RulesFullRegret(game.rules)
    for policy in profiles:
        straight.add(policy)
    for policy in profiles[:2]:
        resumed.add(policy)
    restored = RulesFullRegret(game.rules)
    restored.load_state_dict(resumed.state_dict())
    for policy in profiles[2:]:
        restored.add(policy)
    assert restored.average_regrets() == straight.average_regrets()
    with pytest.raises(ValueError, match="no profiles"):
        RulesFullRegret(game.rules).average_regrets()
    with pytest.raises(ValueError, match="liars_dice"):
        RulesFullRegret(rcfr.make_rules("liars_dice", dice1=1, dice2=1)).add(profiles[0])
    broken = resumed.state_dict()
    broken["starts"] = broken["starts"][:-1]
    with pytest.raises(ValueError, match="inconsistent"):
        RulesFullRegret(game.rules).load_state_dict(broken)
