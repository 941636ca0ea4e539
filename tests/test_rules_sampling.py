"""Sampling solvers on a game walked by its rules (`rcfr.sources.rules.RulesGame`) against the same solvers on the compiled tree.

Both sources give the walks the same nodes in the same order and the walks draw the same random numbers,
so a seeded run must leave bit-identical regrets and average sums at every information set (matched by
its `infoset_code`). The tests that run the walks are in the slow set: the driver compiled for the rules
bundle costs minutes of CPU on a cold numba cache.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import rcfr
from rcfr.errors import RulesPathWarning, TooLarge
from rcfr.evaluation import rules as rules_evaluation
from rcfr.policy.rules import CodePolicy, infoset_codes
from rcfr.solvers import mccfr
from rcfr.sources.rules import RulesGame

GAMES = [("kuhn", {}), ("leduc", {}), ("goofspiel", {"cards": 4}), ("liars_dice", {}), ("dieroll", {"faces": 3}),
         ("latent_ttt", {"opening": (4, 0, 8)}), ("phantom_ttt", {"opening": (4, 0, 8, 2)}), ("pam", {"horizon": 2})]
SOLVERS = {
    "es": (mccfr.ExternalSamplingMCCFR, {}),
    "os": (mccfr.OutcomeSamplingMCCFR, {}),
    "os-simultaneous": (mccfr.OutcomeSamplingMCCFR, {"updates": "simultaneous", "average_mode": "optimistic"}),
    "cs": (mccfr.ChanceSamplingCFR, {}),
    "cs-paired": (mccfr.ChanceSamplingCFR, {"chance_sampling": "paired"}),
    "vanilla": (mccfr.ChanceSamplingCFR, {"chance_sampling": "all"}),
    "pure": (mccfr.PureCFR, {}),
    "as": (mccfr.AverageStrategySampling, {}),
    "probing": (mccfr.ProbingMCCFR, {"regret_matching": "rm+"}),
    "mccfrb": (mccfr.MCCFRb, {}),
    "mccfrb-eda": (mccfr.MCCFRb, {"baseline": "eda", "baseline_decay": 0.3}),
}


def both(name, params, solver, seed=7, initial_sets=None):
    cls, options = SOLVERS[solver]
    game = rcfr.load_game(name, **params)
    rules = rcfr.load_game(name, compiled=False, **params)
    if initial_sets is not None:
        rules.initial_sets = initial_sets
    return cls(game, seed=seed, **options), cls(rules, seed=seed, **options)


def per_code(solver, values):
    """{code: row} of a compiled solver's per-sequence array."""
    game = solver.game
    codes = infoset_codes(game)
    f, n = game.infoset_first_seq, game.infoset_num_actions
    return {int(c): values[f[I]:f[I] + n[I]] for I, c in enumerate(codes)}


def assert_same_tables(compiled, walked):
    b = walked.buffers
    for name in ("regrets", "avg"):
        theirs = per_code(compiled, getattr(compiled.buffers, name))
        codes, first, ours = b.table(getattr(b.state, name))
        assert set(codes.tolist()) <= set(theirs)
        met = dict(zip(codes.tolist(), np.split(ours, first[1:-1])))
        for code, row in theirs.items():
            expected = met.get(code, np.zeros_like(row))  # a set never met has nothing yet
            assert np.array_equal(row, expected), (name, code, row, expected)


@pytest.mark.slow
@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("name, params", GAMES, ids=[g for g, _ in GAMES])
def test_seeded_runs_equal_the_compiled_path(name, params, solver):
    compiled, walked = both(name, params, solver)
    for chunk in (1, 40, 159):  # growth between chunks and inside them
        compiled.run(chunk)
        walked.run(chunk)
    assert walked.nodes_touched == compiled.nodes_touched
    assert_same_tables(compiled, walked)
    policy = walked.average_policy()
    assert isinstance(policy, CodePolicy)
    expected = rcfr.exploitability(compiled.game, compiled.average_policy())
    assert rules_evaluation.exploitability(walked.game.rules, policy, default="uniform") == pytest.approx(
        expected, abs=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("solver", ["es", "os", "cs", "mccfrb"])
def test_growing_and_undoing_an_overflow_change_nothing(solver):
    """From 2 sets the arrays overflow inside the first calls (undone and rerun larger) and grow often."""
    _, roomy = both("leduc", {}, solver, initial_sets=1 << 12)
    _, tight = both("leduc", {}, solver, initial_sets=2)
    for s in (roomy, tight):
        s.run(200)
    assert tight.buffers.tree.meta[2] > 2  # it grew
    for name in ("regrets", "avg"):
        assert np.array_equal(roomy.buffers.table(getattr(roomy.buffers.state, name))[2],
                              tight.buffers.table(getattr(tight.buffers.state, name))[2])
    assert roomy.nodes_touched == tight.nodes_touched


@pytest.mark.slow
@pytest.mark.parametrize("solver", ["es", "mccfrb"])
def test_checkpoint_resumes_bit_identically(solver):
    _, straight = both("goofspiel", {"cards": 4}, solver)
    _, first = both("goofspiel", {"cards": 4}, solver)
    straight.run(60)
    first.run(30)
    state = first.state_dict()
    _, second = both("goofspiel", {"cards": 4}, solver, initial_sets=16)
    second.load_state_dict(state)
    second.run(30)
    for name in ("regrets", "avg"):
        assert np.array_equal(straight.buffers.table(getattr(straight.buffers.state, name))[2],
                              second.buffers.table(getattr(second.buffers.state, name))[2])
    compiled = SOLVERS[solver][0](rcfr.load_game("goofspiel", cards=4), seed=7)
    with pytest.raises(ValueError, match="goofspiel"):
        compiled.load_state_dict(state)  # a rules-path checkpoint is not the compiled game's


def test_a_damaged_checkpoint_index_is_refused():
    _, walked = both("kuhn", {}, "es")
    state = walked.state_dict()
    state["sampler.codes"] = np.zeros(3, np.int64)  # repeated codes, and fewer than num_actions has
    with pytest.raises(ValueError, match="index is inconsistent"):
        walked.load_state_dict(state)


@pytest.mark.parametrize("cls, kwargs, field", [
    (mccfr.VarianceReducedMCCFR, {}, "vr-mccfr on leduc.* its sampler needs the compiled tree's history ids"),
    (mccfr.PublicChanceSamplingCFR, {}, "pcs-cfr on leduc.* its sampler needs the compiled tree's history ids"),
    (mccfr.ExternalSamplingMCCFR, {"average_mode": "lazy"}, "average_mode"),
    (mccfr.ChanceSamplingCFR, {"chance_sampling": "common", "updates": "alternating"}, "chance_sampling"),
])
def test_what_needs_the_tree_is_refused_on_the_rules(cls, kwargs, field):
    with pytest.raises(ValueError, match=field):
        cls(rcfr.load_game("leduc", compiled=False), **kwargs)


def test_load_game_picks_the_path():
    assert isinstance(rcfr.load_game("kuhn", compiled=False), RulesGame)
    assert not isinstance(rcfr.load_game("kuhn"), RulesGame)
    with pytest.raises(TooLarge, match="phantom_ttt"):
        rcfr.load_game("phantom_ttt", compiled=True)
    with pytest.warns(RulesPathWarning, match="Walking it by its rules"):
        game = rcfr.load_game("phantom_ttt")
    assert isinstance(game, RulesGame) and game.depth == 18 and game.widest == 9
    with pytest.raises(ValueError, match="compiled must be"):
        rcfr.load_game("kuhn", compiled="yes")


@pytest.mark.parametrize("name, params", GAMES, ids=[g for g, _ in GAMES])
def test_walk_bounds_hold(name, params):
    """Bounds a game declares (or that counting finds) cover the compiled game's deepest path and widest node."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rules = rcfr.load_game(name, compiled=False, **params)
    game = rcfr.load_game(name, **params)
    assert int(game.depth.max()) <= rules.depth and int(game.num_children.max()) <= rules.widest
    if rules.fast.max_infosets:
        assert game.num_infosets <= rules.fast.max_infosets


def average_plans_shifted(game, iterations):
    """Vanilla CFR (alternating) whose average takes player 0's plan *after* its update: sigma_0^2..sigma_0^(T+1)
    for player 0, sigma_1^1..sigma_1^T for player 1 (see test_vanilla_cfr_on_the_rules_is_the_cfr_solver)."""
    solver = rcfr.solvers.CFR(game, updates="alternating")
    sums = [np.zeros(v.num_sequences) for v in game.views]
    for _ in range(iterations):
        sums[1] += solver._plan(1)
        solver.run(1)
        sums[0] += solver._plan(0)
    return rcfr.Policy.from_local(game, [v.normalize(s) for v, s in zip(game.views, sums)])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["kuhn", "leduc"])
def test_vanilla_cfr_on_the_rules_is_the_cfr_solver(name):
    """ChanceSamplingCFR(chance_sampling="all") walks every chance outcome: vanilla CFR, on the rules as on the
    compiled tree. Convention: the chance walk credits a player's average strategy during the *other* player's
    walk (as the sampling walks do). With simultaneous updates (the default) that is the same sigma^t the `cfr`
    solver averages, so the two agree to rounding. With alternating updates the regrets, hence the current
    policies, still agree, but player 0's average is credited after player 0's update in the same iteration:
    it averages sigma_0^2..sigma_0^(T+1) where `cfr` averages sigma_0^1..sigma_0^T (player 1's are the same)."""
    game, rules = rcfr.load_game(name), rcfr.load_game(name, compiled=False)
    for updates in ("simultaneous", "alternating"):
        tabular = rcfr.solvers.CFR(game, updates=updates)
        walked = mccfr.ChanceSamplingCFR(rules, chance_sampling="all", updates=updates)
        compiled = mccfr.ChanceSamplingCFR(game, chance_sampling="all", updates=updates)
        for s in (tabular, walked, compiled):
            s.run(60)
        ours = walked.average_policy().to_policy(game, default="uniform").probs
        np.testing.assert_allclose(compiled.average_policy().probs, ours, rtol=0, atol=1e-14)
        np.testing.assert_allclose(walked.current_policy().to_policy(game, default="uniform").probs,
                                   tabular.current_policy().probs, rtol=0, atol=1e-11)
        expected = tabular.average_policy() if updates == "simultaneous" else average_plans_shifted(game, 60)
        np.testing.assert_allclose(ours, expected.probs, rtol=0, atol=1e-11)
    assert np.abs(ours - tabular.average_policy().probs).max() > 1e-3  # the alternating shift is visible
