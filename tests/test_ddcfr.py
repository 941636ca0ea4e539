"""ddcfr (Xu et al., ICLR 2024): the shipped policy file and its checks, ddcfr with constant parameters against
`dcfr`, blocks of changing parameters against an independent reference walk, the observation, convergence,
resume, loud options and the training script."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import rcfr
from rcfr.solvers import SOLVERS, make_solver
from rcfr.solvers.ddcfr import (
    LOG_FLOOR,
    POLICY_FILE,
    RANGES,
    TAUS,
    ConstantPolicy,
    DiscountPolicy,
    shipped_policy,
)
from tests.brute import policy_rows
from tests.test_frontier import MatrixGame, _matched, _power_weight, reference_run, resumed_pair


# ---- the policy file ---------------------------------------------------------------------------------
def test_the_shipped_policy_loads_verified_and_acts_in_range():
    data = json.loads(POLICY_FILE.read_text())
    policy = shipped_policy()
    assert policy.fingerprint == data["sha256"] and len(policy.fingerprint) == 64
    assert data["training"]["seed"] == 0 and data["training"]["command"].startswith("python -m benchmarks")
    for progress in np.linspace(0, 1, 5):
        for frac in np.linspace(0, 1, 5):
            *parameters, tau = policy.act(progress, frac)
            for name, x in zip(RANGES, parameters):
                assert RANGES[name][0] <= x <= RANGES[name][1]
            assert tau in TAUS


def _corrupt(tmp_path, change):
    data = json.loads(POLICY_FILE.read_text())
    change(data)
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("change,message", [
    (lambda d: d["weights"]["b2"].__setitem__(0, d["weights"]["b2"][0] + 1e-9), "SHA-256"),
    (lambda d: d["weights"]["w1"][0].__setitem__(0, float("nan")), "non-finite"),
    (lambda d: d["weights"]["w2"].pop(), "w2 has shape"),
    (lambda d: d.__setitem__("version", 2), "version"),
    (lambda d: d.__setitem__("taus", [1, 2, 5, 10, 50]), "taus"),
    (lambda d: d["weights"].pop("b1"), "w1, b1, w2, b2"),
])
def test_a_corrupted_policy_file_is_refused(tmp_path, change, message, kuhn):
    path = _corrupt(tmp_path, change)
    with pytest.raises(ValueError, match=message):
        DiscountPolicy.load(path)
    with pytest.raises(ValueError, match=message):
        make_solver("ddcfr", kuhn, horizon=10, policy=str(path))


def test_an_intact_copy_loads_and_a_missing_or_garbled_file_is_refused(tmp_path):
    path = _corrupt(tmp_path, lambda d: None)
    assert DiscountPolicy.load(path).fingerprint == shipped_policy().fingerprint
    with pytest.raises(ValueError, match="cannot read"):
        DiscountPolicy.load(tmp_path / "absent.json")
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not JSON"):
        DiscountPolicy.load(path)


def test_a_vector_round_trips_through_the_file_format():
    policy = DiscountPolicy.from_vector(np.arange(DiscountPolicy.size(3)) / 50.0, 3)
    again = DiscountPolicy.from_dict(json.loads(json.dumps(policy.to_dict())))
    np.testing.assert_array_equal(again.vector(), policy.vector())
    assert again.fingerprint == policy.fingerprint
    with pytest.raises(ValueError, match="numbers"):
        DiscountPolicy.from_vector(np.zeros(5), 3)


# ---- constant parameters are DCFR -----------------------------------------------------------------------
def test_dcfr_defaults_reproduce_dcfr_bit_for_bit(kuhn):
    """An independent check: `dcfr` adds and then discounts (RegretTable, exact t^2 average weights), ddcfr
    discounts and then adds (its own table, the running ratio ((t-1)/t)^gamma). Their current strategies are
    bit-identical, dcfr's regrets are ddcfr's times the last iteration's discount sign by sign, bit for bit, and
    the averages agree to rounding."""
    iterations = 1000
    ours = make_solver("ddcfr", kuhn, horizon=1000, policy=ConstantPolicy(1.5, 0.0, 2.0, 1)).run(iterations)
    theirs = make_solver("dcfr", kuhn).run(iterations)
    np.testing.assert_array_equal(ours.current_policy().probs, theirs.current_policy().probs)
    np.testing.assert_allclose(ours.average_policy().probs, theirs.average_policy().probs, rtol=0, atol=1e-13)
    d_alpha, d_beta = _power_weight(iterations, 1.5), _power_weight(iterations, 0.0)
    for p in (0, 1):
        R = ours.store.regrets[p]
        np.testing.assert_array_equal(theirs.store.regrets[p], R * np.where(R > 0, d_alpha, d_beta))
    assert ours.evaluations == iterations  # tau = 1: one exploitability evaluation per iteration
    assert abs(rcfr.exploitability(kuhn, ours.average_policy()) - 1.4650022861e-4) < 1e-12  # dcfr's, T = 1,000


def test_other_parameters_differ_from_dcfr(kuhn):
    """Negative control of the test above: it would fail for any other parameters, or the shipped policy."""
    theirs = make_solver("dcfr", kuhn).run(300).average_policy().probs
    for policy in (ConstantPolicy(2.0, -1.0, 3.0, 5), ConstantPolicy(1.5, 0.0, 2.5, 1), None):
        ours = make_solver("ddcfr", kuhn, horizon=1000, policy=policy).run(300).average_policy().probs
        assert np.abs(ours - theirs).max() > 1e-4, policy


# ---- changing parameters against an independent reference ----------------------------------------------
class Scripted:
    """Parameters from a fixed list, one entry per decision, recording what the policy was shown."""

    fingerprint = "scripted"

    def __init__(self, steps):
        self.steps, self.seen = steps, []

    def act(self, progress, frac):
        self.seen.append((progress, frac))
        return self.steps[min(len(self.seen) - 1, len(self.steps) - 1)]


STEPS = [(1.5, 0.0, 2.0, 2), (3.0, -2.0, 0.5, 1), (0.5, -4.5, 4.0, 5), (4.0, -0.5, 1.0, 1)]


def reference(rules, steps, iterations):
    """The paper's code's DCFR by the papers' formulas (`test_frontier.reference_run`): R = R d(t-1) + r by sign,
    the average cum ((t-1)/t)^gamma + reach sigma; the parameters of iteration t from the decision whose block
    holds t. Returns the average per information-set key."""
    schedule = []
    for i in range(iterations):
        alpha, beta, gamma, tau = steps[min(i, len(steps) - 1)]
        schedule += [(alpha, beta, gamma)] * tau
        if len(schedule) >= iterations:
            break

    def update(R, r, t):
        alpha, beta, _ = schedule[t - 1]
        return np.array([x * _power_weight(t - 1, alpha if x > 0 else beta) for x in R]) + r

    return reference_run(rules, update, lambda R, r, t, *_: _matched(R), lambda s: schedule[s][2], iterations)[1]


@pytest.mark.parametrize("rules", [rcfr.games.Kuhn(), MatrixGame(0)], ids=["kuhn", "matrix"])
def test_blocks_of_parameters_match_the_reference(rules):
    game = rcfr.compile_game(rules)
    iterations = 14  # blocks 2, 1, 5, then tau 1 to the end
    solver = make_solver("ddcfr", game, horizon=20, policy=Scripted(STEPS)).run(iterations)
    average = reference(rules, STEPS, iterations)
    for key, row in policy_rows(solver.average_policy()).items():
        np.testing.assert_allclose(row, average[key], rtol=1e-10, atol=1e-13, err_msg=key)
    assert [d["iteration"] for d in solver.decisions] == [0, 2, 3, 8, 9, 10, 11, 12, 13]
    wrong = reference(rules, [(1.5, 0.0, 2.0, 1)] + STEPS[1:], iterations)  # negative control: another tau
    assert any(not np.allclose(row, wrong[k], rtol=1e-6) for k, row in policy_rows(solver.average_policy()).items())


def test_the_observation_is_progress_and_the_normalized_log_exploitability(kuhn):
    policy = Scripted(STEPS)
    horizon = 16
    make_solver("ddcfr", kuhn, horizon=horizon, policy=policy).run(10)
    assert policy.seen[0] == (0.0, 1.0)
    start = math.log10(rcfr.exploitability(kuhn, make_solver("ddcfr", kuhn, horizon=horizon,
                                                                  policy=Scripted(STEPS)).average_policy()))
    for (progress, frac), done in zip(policy.seen[1:], [2, 3, 8, 9]):
        value = rcfr.exploitability(kuhn, make_solver("ddcfr", kuhn, horizon=horizon,
                                                      policy=Scripted(STEPS)).run(done).average_policy())
        assert progress == done / horizon
        assert frac == pytest.approx((math.log10(value) - LOG_FLOOR) / (start - LOG_FLOOR), rel=1e-12)
    past = Scripted([(1.5, 0.0, 2.0, 5)])
    make_solver("ddcfr", kuhn, horizon=4, policy=past).run(12)
    assert [p for p, _ in past.seen] == [0.0, 1.0, 1.0]  # past the horizon the progress stays 1


def test_parameters_out_of_range_from_a_policy_are_refused(kuhn):
    for step, field in (((5.5, 0.0, 2.0, 1), "alpha"), ((1.5, 0.5, 2.0, 1), "beta"),
                        ((1.5, 0.0, float("nan"), 1), "gamma"), ((1.5, 0.0, 2.0, 3), "tau")):
        with pytest.raises(ValueError, match=field):
            make_solver("ddcfr", kuhn, horizon=10, policy=Scripted([step])).run(1)


# ---- convergence and resume -----------------------------------------------------------------------------
def test_the_shipped_policy_converges_on_kuhn(kuhn):
    solver = make_solver("ddcfr", kuhn, horizon=1000).run(1000)
    value = rcfr.exploitability(kuhn, solver.average_policy())
    cfr = rcfr.exploitability(kuhn, make_solver("cfr", kuhn).run(1000).average_policy())
    dcfr = rcfr.exploitability(kuhn, make_solver("dcfr", kuhn).run(1000).average_policy())
    assert value < cfr / 10 and value < dcfr, (value, cfr, dcfr)
    assert 0 < solver.evaluations <= 1000


def test_a_checkpoint_resumes_bit_for_bit_mid_block(kuhn):
    straight, resumed = resumed_pair("ddcfr", kuhn, 47, 23, horizon=60)
    assert straight.evaluations == resumed.evaluations
    assert straight.decisions[-len(resumed.decisions):] == resumed.decisions


def test_a_checkpoint_of_another_policy_or_horizon_is_refused(kuhn):
    state = make_solver("ddcfr", kuhn, horizon=60).run(5).state_dict()
    with pytest.raises(ValueError, match="policy"):
        make_solver("ddcfr", kuhn, horizon=60, policy=ConstantPolicy()).load_state_dict(state)
    with pytest.raises(ValueError, match="horizon"):
        make_solver("ddcfr", kuhn, horizon=61).load_state_dict(state)
    state["ddcfr.parameters"] = np.array([1.5, 0.0, 9.0])  # a gamma outside its range
    with pytest.raises(ValueError, match="gamma"):
        make_solver("ddcfr", kuhn, horizon=60).load_state_dict(state)


# ---- loud options ---------------------------------------------------------------------------------------
def test_the_horizon_is_required(kuhn):
    with pytest.raises(ValueError, match="horizon=T"):
        make_solver("ddcfr", kuhn)


@pytest.mark.parametrize("options,field", [
    ({"horizon": 0}, "horizon"), ({"horizon": -5}, "horizon"), ({"horizon": 2.5}, "horizon"),
    ({"horizon": float("nan")}, "horizon"), ({"horizon": True}, "horizon"),
    ({"horizon": 10, "updates": "both"}, "updates"), ({"horizon": 10, "policy": 42}, "policy"),
    ({"horizon": 10, "horizn": 3}, "horizon"),
])
def test_bad_options_fail_naming_the_field(options, field, kuhn):
    with pytest.raises((TypeError, ValueError), match=field):
        make_solver("ddcfr", kuhn, **options)


@pytest.mark.parametrize("kwargs,field", [({"alpha": float("nan")}, "alpha"), ({"beta": 1.0}, "beta"),
                                          ({"gamma": -1.0}, "gamma"), ({"tau": 3}, "tau")])
def test_a_bad_constant_policy_fails_naming_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        ConstantPolicy(**kwargs)


def test_ddcfr_is_registered():
    assert SOLVERS["ddcfr"].solver_name == "ddcfr"


# ---- the training script ----------------------------------------------------------------------------------
def test_the_training_script_writes_a_policy_that_loads_and_is_reproducible(tmp_path):
    from benchmarks.studies import ddcfr_train
    games = {"Kuhn": (lambda: rcfr.load_game("kuhn"), 3.0),
             "Small matrix": (lambda: rcfr.compile_game(ddcfr_train.SmallMatrix()), 1.0)}
    runs = []
    for name in ("a", "b"):
        data = ddcfr_train.train(epochs=2, pairs=2, sigma=0.05, lr=0.03, seed=3, hidden=4, iterations=30,
                                 out=tmp_path / f"{name}.json", curve=tmp_path / f"{name}.csv", games=games,
                                 quiet=True)
        runs.append(data)
        policy = DiscountPolicy.load(tmp_path / f"{name}.json")
        assert policy.fingerprint == data["sha256"] and policy.hidden == 4
        assert len((tmp_path / f"{name}.csv").read_text().splitlines()) == 1 + 3  # header, epochs 0..2
    assert runs[0]["sha256"] == runs[1]["sha256"]  # same seed, same file
    assert runs[0]["training"]["curve"] == runs[1]["training"]["curve"]


def test_rank_utilities_are_centred_and_ordered():
    from benchmarks.studies.ddcfr_train import rank_utilities
    u = rank_utilities(np.array([0.1, 3.0, -1.0, 2.0]))
    assert abs(u.sum()) < 1e-12 and u[1] > u[3] > u[0] >= u[2]


def test_ddcfr_runs_on_an_abstraction(leduc):
    """abstract_solver wraps the store after construction: the parameters each decision sets must still reach
    the table inside (the identity abstraction gives the plain solver's iterates)."""
    from rcfr.abstraction import abstract_solver, identity
    plain = make_solver("ddcfr", leduc, horizon=40).run(40)
    tied = abstract_solver("ddcfr", leduc, identity(leduc), horizon=40).run(40)
    np.testing.assert_array_equal(plain.average_policy().probs, tied.average_policy().probs)
    assert tied.decisions == plain.decisions and len({d["alpha"] for d in plain.decisions}) > 1
