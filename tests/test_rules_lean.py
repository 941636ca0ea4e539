"""Lean sampled RCFR(+) on a game walked by its rules (`rcfr.solvers.lean_rules`): the same run as on the compiled
tree where the fits cannot depend on how sequences are numbered, independent of how the arrays grow, and resumed
bit for bit."""

import numpy as np
import pytest

import rcfr
from rcfr.evaluation import rules as rules_evaluation
from rcfr.solvers import SampledRCFR, SampledRCFRPlus
from rcfr.sources.rules import RulesGame

LEAN = {"features_on_demand": True, "features": "liars_dice", "traversals": 3, "seed": 7}
TREES = {"name": "best_first", "max_leaves": 16}


@pytest.fixture(scope="module")
def games():
    return rcfr.load_game("liars_dice", dice1=1, dice2=1, compiled=False), rcfr.load_game("liars_dice", dice1=1, dice2=1)


def _exploitability(rules_game, solver):
    return rules_evaluation.exploitability(rules_game.rules, solver.average_policy(), default="uniform")


@pytest.mark.slow  # each test here runs the sampling driver on the rules' state source (a minute to compile cold)
@pytest.mark.parametrize("sampler", ["external", "outcome"])
def test_equals_the_compiled_path_with_a_table(games, sampler):
    """With the exact table and every stored target fit, a fit cannot depend on the numbering of sequences: the
    rules path's average policy is the compiled path's, set by set."""
    walked, compiled = games
    options = {**LEAN, "sampler": sampler, "regressor": "table", "capacity": 10**6}
    on_rules = SampledRCFRPlus(walked, **options).run(20)
    on_tree = SampledRCFRPlus(compiled, **options).run(20)
    assert on_rules.nodes_touched == on_tree.nodes_touched > 0
    mapped = on_rules.average_policy().to_policy(compiled, default="uniform")
    np.testing.assert_allclose(mapped.probs, on_tree.average_policy().probs, rtol=0, atol=1e-12)
    assert _exploitability(walked, on_rules) < 0.9  # it learned something (uniform play: above 0.9)


@pytest.mark.slow
@pytest.mark.parametrize("solver, targets", [(SampledRCFRPlus, "stored"), (SampledRCFR, "reservoir")])
def test_growing_arrays_change_nothing(games, monkeypatch, solver, targets):
    """Arrays that start with room for 4 sets grow many times, and the discovery walk starts again whenever a
    traversal overflows them: same sets, same numbering, same policy as arrays that never grow."""
    walked, _ = games
    options = {**LEAN, "regressor": TREES, "targets": targets, "capacity": 200, "refit_every": 2}
    roomy = solver(walked, **options).run(12)
    monkeypatch.setattr(RulesGame, "initial_sets", 4)
    tight = solver(walked, **options).run(12)
    assert tight.buffers.meta[2] < roomy.buffers.meta[2]  # it did grow from less room
    assert np.array_equal(tight.buffers.index["codes"][:tight.buffers.num_sets],
                          roomy.buffers.index["codes"][:roomy.buffers.num_sets])
    a, b = tight.average_policy(), roomy.average_policy()
    assert np.array_equal(a.codes, b.codes) and np.array_equal(a.probs, b.probs)


@pytest.mark.slow
@pytest.mark.parametrize("sampler, solver, targets", [("external", SampledRCFRPlus, "stored"),
                                                     ("outcome", SampledRCFRPlus, "stored"),
                                                     ("external", SampledRCFR, "reservoir")])
def test_resumes_bit_for_bit(games, sampler, solver, targets):
    walked, _ = games
    options = {**LEAN, "sampler": sampler, "regressor": TREES, "targets": targets, "capacity": 200, "refit_every": 3}
    straight = solver(walked, **options).run(10)
    first = solver(walked, **options).run(5)
    resumed = solver(walked, **options)
    resumed.load_state_dict(first.state_dict())
    resumed.run(5)
    a, b = straight.average_policy(), resumed.average_policy()
    assert np.array_equal(a.codes, b.codes) and np.array_equal(a.probs, b.probs)
    assert straight.nodes_touched == resumed.nodes_touched
    c, d = straight.current_policy(), resumed.current_policy()
    assert np.array_equal(c.probs, d.probs)


@pytest.mark.slow
def test_asking_for_policies_mid_run_changes_nothing(games):
    """The kit asks for the current policy every iteration under run.measure=full_regret: predicting every set met
    then must leave the run as it was."""
    walked, _ = games
    options = {**LEAN, "regressor": TREES, "capacity": 200, "refit_every": 2}
    quiet, asked = SampledRCFRPlus(walked, **options), SampledRCFRPlus(walked, **options)
    for _ in range(6):
        quiet.run(1)
        asked.current_policy()
        asked.run(1)
    a, b = quiet.average_policy(), asked.average_policy()
    assert np.array_equal(a.codes, b.codes) and np.array_equal(a.probs, b.probs)


@pytest.mark.slow
def test_current_policy_is_the_models(games):
    """The current policy of every set met is regret matching on the model's predictions (uniform before any
    fit), not whatever the profile last held."""
    walked, _ = games
    solver = SampledRCFRPlus(walked, **LEAN, regressor=TREES, capacity=200)
    fresh = solver.current_policy()
    assert len(fresh.codes) == 0  # nothing met yet
    solver.run(4)
    policy = solver.current_policy()
    assert len(policy.codes) == solver.buffers.num_sets
    assert not np.allclose(policy.probs, rcfr.policy.rules.normalized(np.zeros_like(policy.probs), policy.first,
                                                                      positive=False))


@pytest.mark.parametrize("options, field", [({"profile": "cache"}, "profile"), ({"sampler": "probing"}, "sampler"),
                                            ({"features_on_demand": False, "features": "auto"}, "features_on_demand")])
def test_refuses_what_the_rules_path_cannot_do(games, options, field):
    walked, _ = games
    with pytest.raises(ValueError, match=field):
        SampledRCFRPlus(walked, **{**LEAN, **options})
    with pytest.raises(TypeError, match="RulesGame"):
        from rcfr.solvers.lean_rules import RulesLeanSampledRCFR
        RulesLeanSampledRCFR(games[1], SampledRCFRPlus(walked, **LEAN).options)
