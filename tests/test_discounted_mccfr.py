"""Linear and discounted MCCFR: the sampled solvers' ``alpha`` (regret weights W(t) = prod_{k<t} (1 + k^-alpha),
the table kept divided by DCFR's discounts) and ``averaging`` (t^gamma).

Checked three ways: walking every chance outcome (chance-sampled CFR with chance_sampling="all" is vanilla CFR)
the sampled solver is the full-width `RegretTable` with alpha = beta, on the compiled tree and on the rules;
with outcome sampling the weighted sampled regrets equal, in expectation, the full-width discounted update at
the profiles the run played (negative control: the unweighted sum is far off); checkpoints resume bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

import rcfr
from rcfr.regrets import counterfactual_regrets
from rcfr.sampling.strategies import regret_weight
from rcfr.solvers import CFRSolver, make_solver, mccfr
from rcfr.solvers.stores import RegretTable


def _discount(t: int, alpha: float) -> float:
    return t ** alpha / (t ** alpha + 1.0)


@pytest.mark.parametrize("alpha,averaging", [(1.0, "linear"), (1.5, 2.0), (3.0, 0.0)])
def test_walking_every_chance_outcome_is_the_full_width_discounted_update(alpha, averaging, kuhn):
    sampled = mccfr.ChanceSamplingCFR(kuhn, chance_sampling="all", updates="simultaneous", alpha=alpha,
                                      averaging=averaging).run(40)
    full = CFRSolver(kuhn, RegretTable("rm", alpha=alpha, beta=alpha), updates="simultaneous",
                     averaging=averaging).run(40)
    np.testing.assert_allclose(sampled.average_policy().probs, full.average_policy().probs, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sampled.current_policy().probs, full.current_policy().probs, rtol=0, atol=1e-12)
    # the table is the discounted one divided by prod_{k <= T} d(k) = 1 / W(T + 1)
    table = np.concatenate([r[1:] for r in full.store.regrets])
    np.testing.assert_allclose(sampled.buffers.regrets / sampled.regret_weight_at(41), table, rtol=1e-10, atol=1e-13)


def test_the_comparison_tells_the_schedules_apart(kuhn):
    """Negative control: the same comparison against plain CFR, and against DCFR's beta = 0, fails."""
    sampled = mccfr.ChanceSamplingCFR(kuhn, chance_sampling="all", updates="simultaneous", alpha=1.5).run(40)
    for table in (RegretTable("rm"), RegretTable("rm", alpha=1.5, beta=0.0)):
        full = CFRSolver(kuhn, table, updates="simultaneous").run(40)
        assert np.abs(sampled.current_policy().probs - full.current_policy().probs).max() > 1e-3


def test_linear_weights_are_the_iteration():
    w = regret_weight(1.0, 1, 1000, 1.0)  # W(1000)
    assert w == pytest.approx(1000.0, rel=1e-12)
    exact = 1.0 / np.prod([_discount(k, 1.5) for k in range(1, 200)])
    assert regret_weight(1.0, 1, 200, 1.5) == pytest.approx(exact, rel=1e-12)
    assert regret_weight(regret_weight(1.0, 1, 77, 2.0), 77, 200, 2.0) == regret_weight(1.0, 1, 200, 2.0)


@pytest.mark.slow  # compiles the rules-path driver: ~1 minute cold
def test_the_rules_path_weighs_like_the_compiled_tree():
    game, rules = rcfr.load_game("kuhn"), rcfr.load_game("kuhn", compiled=False)
    walked = mccfr.ChanceSamplingCFR(rules, chance_sampling="all", alpha=1.5, averaging=2.0).run(30)
    compiled = mccfr.ChanceSamplingCFR(game, chance_sampling="all", alpha=1.5, averaging=2.0).run(30)
    np.testing.assert_allclose(walked.average_policy().to_policy(game, default="uniform").probs,
                               compiled.average_policy().probs, rtol=0, atol=1e-13)


def _weighted_gap(seed: int, game, iterations: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """One outcome-sampling run (simultaneous updates): its table minus sum_t W(t) r(sigma^t), the full-width
    regrets at the profiles it played weighted as the schedule says, and minus their unweighted sum."""
    solver = make_solver("os-mccfr", game, updates="simultaneous", epsilon=0.6, seed=seed, alpha=alpha)
    weighted, plain = np.zeros(game.num_sequences), np.zeros(game.num_sequences)
    for t in range(1, iterations + 1):
        regrets = counterfactual_regrets(game, solver.current_policy())
        weighted += solver.regret_weight_at(t) * regrets
        plain += regrets
        solver.iterate()
    return solver.buffers.regrets - weighted, solver.buffers.regrets - plain


def test_sampled_weighted_regrets_are_unbiased_for_the_full_width_discounted_update(kuhn):
    """E[sum_t W(t) sampled r^t] = E[sum_t W(t) r^t(sigma^t)]: each sampled regret is unbiased given the profile,
    and W(t) is fixed in advance. 400 runs of 6 iterations on Kuhn; every sequence within 4.5 standard errors.
    Negative control: dropping the weights leaves a gap many standard errors wide."""
    runs = [_weighted_gap(seed, kuhn, 6, 1.0) for seed in range(400)]
    for k, (name, limit) in enumerate((("weighted", 4.5), ("unweighted", None))):
        gaps = np.array([run[k] for run in runs])
        z = np.abs(gaps.mean(0)) / (gaps.std(0, ddof=1) / np.sqrt(len(gaps)) + 1e-300)
        if limit is not None:
            assert z.max() < limit, (name, z.max())
        else:
            assert z.max() > 10, (name, z.max())


@pytest.mark.parametrize("name,options", [("es-mccfr", {"alpha": 1.5, "averaging": 2.0}),
                                          ("os-mccfr", {"alpha": 1.0, "averaging": "linear", "seed": 3}),
                                          ("cscfr", {"alpha": 2.0, "regret_matching": "rm+"})])
def test_checkpoints_resume_bit_for_bit(name, options, leduc):
    straight = make_solver(name, leduc, **options).run(300)
    first = make_solver(name, leduc, **options).run(173)
    resumed = make_solver(name, leduc, **options)
    resumed.load_state_dict(first.state_dict())
    resumed.run(127)
    np.testing.assert_array_equal(straight.buffers.regrets, resumed.buffers.regrets)
    np.testing.assert_array_equal(straight.average_policy().probs, resumed.average_policy().probs)
    other = make_solver(name, leduc, **{**options, "alpha": 1.25})
    with pytest.raises(ValueError, match="alpha"):
        other.load_state_dict(first.state_dict())


def test_without_alpha_the_weights_are_one(leduc):
    """Without alpha every weight is exactly 1 (x * 1.0 == x: seeded runs are unchanged, tests/test_golden.py)."""
    plain = make_solver("es-mccfr", leduc, seed=5).run(200)
    assert plain.settings().regret_discount == 0.0 and plain.settings().regret_weight == 1.0
    weighted = make_solver("es-mccfr", leduc, seed=5, alpha=1.0).run(200)
    assert not np.array_equal(plain.buffers.regrets, weighted.buffers.regrets)


@pytest.mark.parametrize("value", [0.5, -1.0, float("nan"), float("inf"), 21.0, "linear", True])
def test_bad_alpha_is_refused_naming_the_field(value, kuhn):
    with pytest.raises(ValueError, match="alpha"):
        make_solver("es-mccfr", kuhn, alpha=value)
