"""RCFR / RCFR+ as a regret store in the one CFR loop, and RRM on normal-form games."""

import numpy as np
import pytest

import rcfr
from rcfr.solvers import RRM, CFRSolver, RegressionRegrets, RegretTable, make_solver, solve_matrix_game

UNIFORM_LEDUC = 2.3736


@pytest.mark.parametrize("regret_matching", ["rm", "rm+"])
@pytest.mark.parametrize("targets", ["stored", "bootstrap"])
@pytest.mark.parametrize("updates,shared", [("alternating", False), ("simultaneous", False), ("alternating", True)])
def test_table_with_indicator_features_is_exactly_cfr(leduc_ranks, regret_matching, targets, updates, shared):
    """Indicator features + the exact table reproduce CFR (CFR+ with uniform averaging) to 1e-9."""
    iterations = 40
    ref = CFRSolver(leduc_ranks, RegretTable(regret_matching), updates=updates)
    ours = make_solver("rcfr+" if regret_matching == "rm+" else "rcfr", leduc_ranks, regressor="table", features="indicator",
                       targets=targets, updates=updates, shared=shared, averaging="uniform")
    for _ in range(iterations):
        ref.iterate()
        ours.iterate()
        for p in (0, 1):
            assert np.allclose(ours.store.estimates(p), ref.store.regrets[p], rtol=0, atol=1e-9)
            assert np.allclose(ours.store.strategy(p), ref.store.strategy(p), rtol=0, atol=1e-9)
    assert np.allclose(ours.average_policy().probs, ref.average_policy().probs, rtol=0, atol=1e-9)
    assert ours.size() == leduc_ranks.num_sequences == 672
    # a test that can fail: the two variants really differ
    other = CFRSolver(leduc_ranks, RegretTable("rm" if regret_matching == "rm+" else "rm+"), updates=updates).run(iterations)
    assert np.abs(other.average_policy().probs - ours.average_policy().probs).max() > 1e-3


def test_rcfr_plus_defaults_to_linear_averaging_like_cfr_plus(kuhn):
    ours = make_solver("rcfr+", kuhn, regressor="table", features="indicator").run(30)
    ref = make_solver("cfr+", kuhn).run(30)
    assert np.allclose(ours.average_policy().probs, ref.average_policy().probs, atol=1e-9)


def test_refit_every_k_keeps_the_strategy_between_refits(kuhn):
    solver = make_solver("rcfr", kuhn, regressor="table", features="indicator", refit_every=3)
    strategies = []
    for _ in range(6):
        solver.iterate()
        strategies.append(solver.store.strategy(0).copy())
    assert np.array_equal(strategies[0], strategies[1]) and not np.array_equal(strategies[1], strategies[2])
    assert np.array_equal(strategies[2], strategies[3]) and np.array_equal(strategies[3], strategies[4])
    # at a refit, the exact table's estimate is the stored cumulative regret of the iterations so far
    assert np.allclose(solver.store.estimates(0)[1:], solver.store.blocks[0].total, atol=1e-12)
    assert np.abs(solver.store.blocks[0].total).max() > 0.1


def test_example_weights_reach_the_regressor(kuhn):
    weights = np.ones(kuhn.num_sequences)
    weights[::2] = 0.0
    solver = make_solver("rcfr", kuhn, regressor={"name": "tree", "max_leaves": 2}, weights=weights).run(3)
    assert solver.store.size() == 4
    with pytest.raises(ValueError, match="weights must be None or 24"):
        make_solver("rcfr", kuhn, weights=np.ones(3))


def test_options_fail_early_with_allowed_values(kuhn):
    with pytest.raises(ValueError, match="unknown targets 'mean'; allowed: stored, bootstrap"):
        make_solver("rcfr", kuhn, targets="mean")
    with pytest.raises(ValueError, match="refit_every"):
        make_solver("rcfr+", kuhn, refit_every=0)
    with pytest.raises(ValueError, match="unknown option.*'leaves'.*allowed: regressor, features, targets"):
        make_solver("rcfr", kuhn, leaves=3)
    with pytest.raises(ValueError, match="unknown features 'cards'"):
        make_solver("rcfr", kuhn, features="cards")
    with pytest.raises(ValueError, match="unknown regressor 'svm'"):
        make_solver("rcfr", kuhn, regressor="svm")


REGRESSOR_SPECS = [{"name": "tree", "max_leaves": 8}, {"name": "best_first", "max_leaves": 8}, {"name": "tree", "max_leaves": 8, "criterion": "absolute_error"},
                   {"name": "recursive", "threshold": 0.02}, {"name": "lightgbm", "n_estimators": 5},
                   {"name": "mlp", "hidden": [8]}, "linear", "table"]


@pytest.mark.parametrize("spec", REGRESSOR_SPECS, ids=lambda s: s if isinstance(s, str) else "-".join(map(str, s.values())))
@pytest.mark.parametrize("solver", ["rcfr", "rcfr+"])
def test_every_regressor_runs_end_to_end_on_kuhn(kuhn, spec, solver):
    run = make_solver(solver, kuhn, regressor=spec, features="poker", targets="bootstrap").run(25)
    value = rcfr.exploitability(kuhn, run.average_policy())
    assert 0 <= value < 0.458333  # better than the uniform policy
    assert run.size() > 0


def test_shared_regressor_reports_one_size_and_resumes(kuhn):
    solver = make_solver("rcfr+", kuhn, regressor={"name": "tree", "max_leaves": 6}, shared=True,
                         features="generic").run(5)
    assert solver.size() == 6
    state = solver.state_dict()
    solver.run(5)
    resumed = make_solver("rcfr+", kuhn, regressor={"name": "tree", "max_leaves": 6}, shared=True,
                          features="generic")
    resumed.load_state_dict(state)
    resumed.run(5)
    assert np.allclose(resumed.average_policy().probs, solver.average_policy().probs, atol=1e-12)


def test_store_plugs_into_the_plain_loop(kuhn):
    store = RegressionRegrets("table", "indicator", regret_matching="rm+")
    solver = CFRSolver(kuhn, store, averaging="linear").run(50)
    assert rcfr.exploitability(kuhn, solver.average_policy()) < 5e-3


def test_small_trees_beat_the_uniform_policy_by_a_wide_margin(leduc_ranks):
    # 10% of the rank-only game's sequences, both players' leaves summed
    solver = make_solver("rcfr+", leduc_ranks, regressor={"name": "tree", "max_leaves": 34}, features="poker").run(60)
    assert 100 * solver.size() / leduc_ranks.num_sequences <= 10.2
    assert rcfr.exploitability(leduc_ranks, solver.average_policy()) < UNIFORM_LEDUC / 4


@pytest.mark.slow
def test_large_tree_rcfr_plus_is_close_to_cfr_plus(leduc_ranks):
    """A best-first tree with a budget of >= 80% of Leduc's sequences ends within a small factor of CFR+.
    (Q-regrets clipped at zero leave many equal targets, so the tree uses only ~70% of the budget.)"""
    iterations = 300
    ref = rcfr.exploitability(leduc_ranks, make_solver("cfr+", leduc_ranks).run(iterations).average_policy())
    solver = make_solver("rcfr+", leduc_ranks, regressor={"name": "tree", "max_leaves": 269}, features="poker")
    value = rcfr.exploitability(leduc_ranks, solver.run(iterations).average_policy())
    assert ref < 5e-3 and value < 2 * ref


@pytest.mark.slow
def test_rcfr_plus_beats_rcfr_at_equal_size(leduc_ranks):
    values = {}
    for name in ("rcfr", "rcfr+"):
        solver = make_solver(name, leduc_ranks, regressor={"name": "tree", "max_leaves": 150}, features="poker")
        values[name] = rcfr.exploitability(leduc_ranks, solver.run(200).average_policy())
    assert values["rcfr+"] < values["rcfr"] / 2


# ---- regression regret matching on normal-form games -----------------------------------------------
WEIGHTED_RPS = np.array([[0.0, -1.0, 3.0], [1.0, 0.0, -1.0], [-3.0, 1.0, 0.0]])  # equilibrium (1/5, 3/5, 1/5)


@pytest.mark.parametrize("regret_matching", ["rm", "rm+"])
@pytest.mark.parametrize("targets", ["stored", "bootstrap"])
@pytest.mark.parametrize("regressor", ["table", pytest.param("linear", marks=pytest.mark.slow)])  # 4-6 s each
def test_rrm_reaches_low_regret_on_rock_paper_scissors(regret_matching, targets, regressor):
    learners = [RRM(3, regressor, regret_matching=regret_matching, targets=targets) for _ in (0, 1)]
    result = solve_matrix_game(WEIGHTED_RPS, *learners, iterations=1000)
    assert result.exploitability < 0.02
    assert max(result.average_regrets) < 0.02
    assert np.allclose(result.row_strategy, [0.2, 0.6, 0.2], atol=0.05)


@pytest.mark.parametrize("regret_matching", ["rm", "rm+"])
@pytest.mark.parametrize("targets", ["stored", "bootstrap"])
def test_rrm_on_a_random_matrix_game_with_features(regret_matching, targets):
    rng = np.random.default_rng(1)
    A = rng.uniform(-1, 1, size=(6, 5))
    row = RRM(np.hstack([np.eye(6), A]), "table", regret_matching=regret_matching, targets=targets)
    column = RRM(np.hstack([np.eye(5), A.T]), "table", regret_matching=regret_matching, targets=targets)
    result = solve_matrix_game(A, row, column, iterations=2000)
    assert result.exploitability < 0.01
    # a learner that stops learning (a one-leaf tree predicts one value) does not get there
    stuck = solve_matrix_game(A, RRM(6, {"name": "tree", "max_leaves": 2}, regret_matching=regret_matching, targets=targets),
                              RRM(5, "table", regret_matching=regret_matching, targets=targets), iterations=300)
    assert stuck.exploitability > result.exploitability


def test_rrm_input_checks():
    with pytest.raises(ValueError, match="payoff must be a 3 x 3 matrix"):
        solve_matrix_game(np.zeros((2, 3)), RRM(3), RRM(3), 1)
    with pytest.raises(ValueError, match="unknown targets"):
        RRM(3, targets="bootstrapped")


def test_the_seed_reaches_random_regressors(kuhn):
    def run(seed, regressor):
        solver = make_solver("rcfr", kuhn, regressor=regressor, features="generic", seed=seed).run(5)
        return solver.average_policy().probs

    mlp = {"name": "mlp", "hidden": [8], "epochs": 5}
    assert np.array_equal(run(3, mlp), run(3, mlp))
    assert not np.array_equal(run(3, mlp), run(4, mlp))
    pinned = {**mlp, "random_state": 7}  # a random_state given with the regressor wins
    assert np.array_equal(run(3, pinned), run(4, pinned))
    from rcfr.regressors import MLP  # a built estimator (what the experiment kit passes) is seeded too
    assert not np.array_equal(run(3, MLP(hidden=[8], epochs=5)), run(4, MLP(hidden=[8], epochs=5)))
    assert np.array_equal(run(3, MLP(hidden=[8], epochs=5, random_state=7)),
                          run(4, MLP(hidden=[8], epochs=5, random_state=7)))
