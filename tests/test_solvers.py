"""The CFR family: convergence to known values, options, checkpoints, bad input."""

import numpy as np
import pytest

import rcfr
from rcfr.solvers import CFR, CFRPlus, CFRSolver, DiscountedCFR, LinearCFR, RegretStore


def test_kuhn_value_from_cfr_plus():
    game = rcfr.load_game("kuhn")
    solver = rcfr.make_solver("cfr+", game).run(2000)
    result = rcfr.evaluate(game, solver.average_policy())
    assert result.value == pytest.approx(-1 / 18, abs=1e-4)
    assert result.exploitability < 1e-4


def test_leduc_cfr_plus_reference_values():
    game = rcfr.load_game("leduc")
    solver = rcfr.make_solver("cfr+", game).run(1000)
    result = rcfr.evaluate(game, solver.average_policy())
    assert result.exploitability < 1e-3
    assert result.value == pytest.approx(-0.0856, abs=1e-3)


def test_rank_only_leduc_has_the_same_value():
    full, merged = rcfr.load_game("leduc"), rcfr.load_game("leduc", merge_suits=True)
    values = [rcfr.evaluate(g, rcfr.make_solver("cfr+", g).run(500).average_policy()).value for g in (full, merged)]
    assert values[0] == pytest.approx(values[1], abs=2e-3)


def test_nlocp_value():
    game = rcfr.load_game("nlocp")
    result = rcfr.evaluate(game, rcfr.make_solver("cfr+", game).run(3000).average_policy())
    assert result.exploitability < 1e-3
    assert result.value == pytest.approx(-0.083, abs=1e-3)


@pytest.mark.parametrize("name, options, bound", [
    ("cfr", {}, 0.02),
    ("cfr", {"updates": "simultaneous"}, 0.06),
    ("cfr+", {"averaging": "uniform"}, 0.01),
    ("lcfr", {}, 0.01),
    ("dcfr", {}, 1e-3),
    ("dcfr", {"alpha": 1.0, "beta": 1.0, "averaging": 1.0}, 0.01),
])
def test_variants_converge_on_leduc(name, options, bound):
    game = rcfr.load_game("leduc")
    solver = rcfr.make_solver(name, game, **options)
    first = rcfr.exploitability(game, solver.run(50).average_policy())
    last = rcfr.exploitability(game, solver.run(950).average_policy())
    assert last < bound and last < first


def test_exploitability_curve_is_mostly_decreasing():
    game = rcfr.load_game("leduc")
    solver = rcfr.make_solver("cfr+", game)
    curve = []
    solver.run(512, callback=lambda s: curve.append(rcfr.exploitability(game, s.average_policy())), every=64)
    assert len(curve) == 8 and curve[-1] < curve[0] / 10


class _ExplicitStore(RegretStore):
    """A regret store written out in NumPy, independent of `RegretTable` and the numba kernels:
    keeps R = sum_t weight(t) * r_t (clipped at zero after each update under "rm+") and regret-matches it."""

    def __init__(self, weight=lambda t: 1.0, regret_matching="rm"):
        self.weight, self.clip = weight, regret_matching == "rm+"

    def bind(self, game):
        self.views = game.views
        self.totals = [np.zeros(v.num_sequences) for v in self.views]
        self.rows = [np.concatenate(([-1], np.repeat(np.arange(v.num_infosets), v.infoset_size)))
                     for v in self.views]

    def strategy(self, player):
        view, rows = self.views[player], self.rows[player][1:]
        positive = np.maximum(self.totals[player][1:], 0.0)
        sums = np.bincount(rows, positive, minlength=view.num_infosets)[rows]
        uniform = 1.0 / view.infoset_size[rows]
        return np.concatenate(([1.0], np.where(sums > 0, positive / np.where(sums > 0, sums, 1.0), uniform)))

    def update(self, player, regrets, iteration):
        self.totals[player] += self.weight(iteration) * regrets
        if self.clip:
            np.maximum(self.totals[player], 0.0, out=self.totals[player])

    def size(self):
        return sum(v.num_sequences - 1 for v in self.views)


@pytest.mark.parametrize("name", ["kuhn", "leduc"])
def test_linear_cfr_matches_explicitly_weighted_regrets(name):
    """LinearCFR discounts its table by t / (t + 1) after each iteration; that must regret-match like
    R_T = sum_t t * r_t kept explicitly (the discounted table is R_T / (T + 1))."""
    game = rcfr.load_game(name)
    reference = CFRSolver(game, _ExplicitStore(weight=float), averaging="linear").run(60)
    for solver in (LinearCFR(game), DiscountedCFR(game, alpha=1.0, beta=1.0, averaging="linear")):
        solver.run(60)
        for p in (0, 1):
            assert np.allclose(solver.store.strategy(p), reference.store.strategy(p), atol=1e-9)
        assert np.allclose(solver.average_policy().probs, reference.average_policy().probs, atol=1e-9)
    # and the comparison has teeth: unweighted regrets (vanilla CFR) give different strategies
    vanilla = CFRSolver(game, _ExplicitStore(), averaging="linear").run(60)
    assert not np.allclose(solver.average_policy().probs, vanilla.average_policy().probs, atol=1e-6)


def test_first_iteration_of_cfr_matches_hand_computation():
    # Kuhn, uniform start. Player 0 holding K at the root: checking is worth less than betting.
    game = rcfr.load_game("kuhn")
    solver = CFR(game)
    solver.iterate()
    current = solver.current_policy()
    assert current["K||"]["r"] == 1.0  # betting with the best card has the only positive regret
    assert current["J||r"]["f"] == 1.0  # folding the worst card to a bet
    assert solver.iteration == 1


def test_policies_are_distributions():
    game = rcfr.load_game("leduc")
    solver = rcfr.make_solver("cfr", game).run(20)
    for policy in (solver.current_policy(), solver.average_policy()):
        sums = np.bincount(game.sequence_infoset, policy.probs)
        assert np.allclose(sums, 1.0) and policy.probs.min() >= 0


def test_average_before_any_iteration_is_uniform():
    game = rcfr.load_game("kuhn")
    assert np.allclose(rcfr.make_solver("cfr+", game).average_policy().probs, 0.5)


def test_checkpoint_resume_is_exact():
    game = rcfr.load_game("leduc")
    straight = rcfr.make_solver("dcfr", game).run(30)
    first = rcfr.make_solver("dcfr", game).run(17)
    resumed = rcfr.make_solver("dcfr", game)
    resumed.load_state_dict({k: v.copy() for k, v in first.state_dict().items()})
    resumed.run(13)
    assert resumed.iteration == 30
    assert np.array_equal(straight.average_policy().probs, resumed.average_policy().probs)
    assert np.array_equal(straight.current_policy().probs, resumed.current_policy().probs)


def test_custom_store_plugs_into_the_loop():
    """A regret-matching+ store written in the test, run through the shared loop, reproduces CFR+."""
    game = rcfr.load_game("kuhn")
    solver = CFRSolver(game, _ExplicitStore(regret_matching="rm+"), averaging=1)
    reference = CFRPlus(game)
    solver.run(50), reference.run(50)
    assert np.allclose(solver.average_policy().probs, reference.average_policy().probs, atol=1e-12)
    assert solver.store.size() == game.num_sequences


def test_progress_bar_runs(capsys):
    game = rcfr.load_game("kuhn")
    rcfr.make_solver("cfr+", game).run(5, progress=True)
    assert "5/5" in capsys.readouterr().err


def test_bad_solver_input_names_allowed_values():
    game = rcfr.load_game("kuhn")
    with pytest.raises(ValueError, match="unknown solver 'cfr-plus'; allowed: (.*, )?cfr, cfr\\+, (.*, )?dcfr, (.*, )?lcfr"):
        rcfr.make_solver("cfr-plus", game)
    with pytest.raises(ValueError, match="'gamma'.*allowed: averaging"):
        rcfr.make_solver("cfr+", game, gamma=2)
    with pytest.raises(ValueError, match="unknown updates 'parallel'; allowed: alternating, simultaneous"):
        rcfr.make_solver("cfr", game, updates="parallel")
    with pytest.raises(ValueError, match="averaging"):
        rcfr.make_solver("cfr+", game, averaging="cubic")
    with pytest.raises(ValueError, match="averaging"):
        rcfr.make_solver("cfr+", game, averaging=-1)
    with pytest.raises(ValueError, match="iterations"):
        rcfr.make_solver("cfr+", game).run(-3)
