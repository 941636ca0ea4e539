"""The predictive and discounted CFR+ family (pcfr+, dcfr+, pdcfr+, hs-dcfr, hs-pcfr+, and the asymmetric
sapcfr+, apcfr+, apdcfr+): each against an
independent reference (a recursive walk over the rules with per-information-set dictionaries and the
papers' update formulas written out), invariants, convergence thresholds and loud options."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import rcfr
from rcfr.games.base import CHANCE, TERMINAL, GameRules
from rcfr.games.matrix import MatrixGame as MatrixRules
from rcfr.solvers import SOLVERS, make_solver
from rcfr.solvers.cfr import CFRSolver
from rcfr.solvers.stores import DiscountedTable, Linear
from tests.brute import policy_rows

NEW = ("pcfr+", "dcfr+", "pdcfr+", "hs-dcfr", "hs-pcfr+", "sapcfr+", "apcfr+", "apdcfr+")


def MatrixGame(seed: int = 0, rows: int = 3, cols: int = 4) -> MatrixRules:
    """A random zero-sum matrix game: player 0 picks a row, player 1 a column without seeing it."""
    return MatrixRules.random(seed, rows, cols)


# ---- the reference: the papers' formulas over dictionaries, one information set at a time -------------
def _power_weight(s: int, power: float) -> float:
    return 0.0 if s == 0 else s ** power / (s ** power + 1.0)


def _matched(values: np.ndarray) -> np.ndarray:
    positive = np.maximum(values, 0.0)
    return positive / positive.sum() if positive.sum() > 0 else np.full(len(values), 1.0 / len(values))


def _adaptive_step(R: np.ndarray, r: np.ndarray, memo: dict, old: np.ndarray) -> float:
    """APCFR+'s prediction step 1 / (1 + a) at one information set: a = min(sqrt(sum of squared prediction
    errors / sum of squared steps of the stored regrets), 5), 5 while the stored regrets never moved."""
    memo["errors"] = memo.get("errors", 0.0) + sum((x - y) ** 2 for x, y in zip(r, memo.get("last", [0.0] * len(r))))
    memo["steps"] = memo.get("steps", 0.0) + sum((x - y) ** 2 for x, y in zip(R, old))
    memo["last"] = list(r)
    a = 5.0 if memo["steps"] == 0 else min(math.sqrt(memo["errors"] / memo["steps"]), 5.0)
    return 1.0 / (1.0 + a)


def _rule(name: str, horizon: int):
    """(regret update(R, r, t), strategy(R, r, t, memo, R before the update), averaging power at 0-based
    index s) per the papers; `memo` is the information set's own scratch dictionary."""
    progress = lambda s: min(s / horizon, 1.0)  # noqa: E731
    plus = lambda R, r, t: np.maximum(R + r, 0.0)  # noqa: E731
    if name == "pcfr+":
        return plus, lambda R, r, t, *_: _matched(np.maximum(R + r, 0.0)), lambda s: 2.0
    if name == "sapcfr+":
        return plus, lambda R, r, t, *_: _matched(np.maximum(R + r / 3.0, 0.0)), lambda s: 2.0
    if name == "apcfr+":
        return (plus, lambda R, r, t, memo, old: _matched(np.maximum(R + _adaptive_step(R, r, memo, old) * r, 0.0)),
                lambda s: 2.0)
    if name == "dcfr+":
        return (lambda R, r, t: np.maximum(R * _power_weight(t - 1, 1.5) + r, 0.0), lambda R, r, t, *_: _matched(R),
                lambda s: 4.0)
    if name == "pdcfr+":
        return (lambda R, r, t: np.maximum(R * _power_weight(t - 1, 2.3) + r, 0.0),
                lambda R, r, t, *_: _matched(np.maximum(R * _power_weight(t, 2.3) + r, 0.0)), lambda s: 5.0)
    if name == "apdcfr+":
        return (lambda R, r, t: np.maximum(R * _power_weight(t - 1, 2.3) + r, 0.0),
                lambda R, r, t, memo, old: _matched(np.maximum(
                    R * _power_weight(t, 2.3) + _adaptive_step(R, r, memo, old) * r, 0.0)), lambda s: 5.0)
    if name == "hs-dcfr":
        def update(R, r, t):
            s = t - 1
            alpha, beta = 1 + 3 * progress(s), -1 - 2 * progress(s)
            return np.array([x * (_power_weight(s, alpha) if x > 0 else _power_weight(s, beta)) for x in R]) + r
        return update, lambda R, r, t, *_: _matched(R), lambda s: 30 - 5 * progress(s)
    if name == "hs-pcfr+":
        return plus, lambda R, r, t, *_: _matched(np.maximum(R + r, 0.0)), lambda s: 30 - 5 * progress(s)
    raise KeyError(name)


def reference(rules: GameRules, name: str, iterations: int, horizon: int = 1000):
    """Rule `name` by the papers' formulas (`reference_run`): (regrets, average) per information-set key."""
    return reference_run(rules, *_rule(name, horizon), iterations)


def reference_run(rules: GameRules, update, strategy, gamma, iterations: int):
    """Alternating updates as in the papers' code: player 0's regrets against the profile at t, then
    player 1's against player 0's new strategy; the average is cum * ((t-1)/t)^gamma + reach * sigma^t.
    `update`, `strategy` and `gamma` as `_rule` returns them."""
    sigma, R, cum, owner, memos = {}, {}, {}, {}, {}

    def walk(state, i, mine, other, instant, reach):
        who = rules.player(state)
        if who == TERMINAL:
            u = rules.utility(state)
            return u if i == 0 else -u
        if who == CHANCE:
            return sum(p * walk(rules.next_state(state, a), i, mine, other * p, instant, reach)
                       for a, (_, p) in enumerate(rules.chance_outcomes(state)))
        key = rules.infoset_key(state)
        n = len(rules.actions(state))
        owner[key] = who
        pol = sigma.setdefault(key, np.full(n, 1.0 / n))
        if who != i:
            return sum(pol[a] * walk(rules.next_state(state, a), i, mine, other * pol[a], instant, reach)
                       for a in range(n))
        values = np.array([walk(rules.next_state(state, a), i, mine * pol[a], other, instant, reach)
                           for a in range(n)])
        v = float(pol @ values)
        instant[key] = instant.get(key, np.zeros(n)) + other * (values - v)
        reach[key] = reach.get(key, 0.0) + mine
        return v

    for t in range(1, iterations + 1):
        for i in (0, 1):
            instant, reach = {}, {}
            walk(rules.initial_state(), i, 1.0, 1.0, instant, reach)
            for key, r in instant.items():
                old = R.get(key, np.zeros(len(r)))
                R[key] = update(old, r, t)
                cum[key] = cum.get(key, 0.0) * ((t - 1) / t) ** gamma(t - 1) + reach[key] * sigma[key]
                sigma[key] = strategy(R[key], r, t, memos.setdefault(key, {}), old)
    average = {k: c / c.sum() if c.sum() > 0 else np.full(len(c), 1 / len(c)) for k, c in cum.items()}
    return R, average


def _store_regrets(game, solver) -> dict[str, np.ndarray]:
    out = {}
    for i, key in enumerate(game.infoset_keys):
        p = int(game.infoset_player[i])
        view = game.views[p]
        first = int(game.infoset_first_seq[i]) - view.offset + 1
        out[str(key)] = solver.store.regrets[p][first:first + int(game.infoset_num_actions[i])]
    return out


CASES = [("kuhn", None), ("matrix", 0), ("matrix", 1)]


@pytest.mark.parametrize("name", NEW)
@pytest.mark.parametrize("which,seed", CASES)
def test_each_rule_matches_the_reference(name, which, seed):
    rules = rcfr.games.Kuhn() if which == "kuhn" else MatrixGame(seed)
    game = rcfr.compile_game(rules)
    iterations, horizon = 8, 5  # past the horizon: schedules hold their end values
    options = {"horizon": horizon} if name.startswith("hs-") else {}
    solver = make_solver(name, game, **options)
    solver.run(iterations)
    regrets, average = reference(rules, name, iterations, horizon)
    ours = _store_regrets(game, solver)
    assert set(ours) <= set(regrets)
    for key, values in ours.items():
        np.testing.assert_allclose(values, regrets[key], rtol=1e-10, atol=1e-13, err_msg=key)
    rows = policy_rows(solver.average_policy())
    for key, row in rows.items():
        np.testing.assert_allclose(row, average[key], rtol=1e-10, atol=1e-13, err_msg=key)


@pytest.mark.parametrize("name,neighbour", [("pcfr+", "dcfr+"), ("sapcfr+", "pcfr+"), ("apcfr+", "sapcfr+"),
                                            ("apdcfr+", "pdcfr+")])
def test_the_reference_can_tell_the_rules_apart(name, neighbour):
    """Negative control: the comparison above would fail for a neighbouring rule (the asymmetric rules: for
    the rule without the asymmetry, or with a fixed one in place of the adaptive one)."""
    rules = rcfr.games.Kuhn()
    game = rcfr.compile_game(rules)
    solver = make_solver(name, game)
    solver.run(8)
    _, average = reference(rules, neighbour, 8)
    rows = policy_rows(solver.average_policy())
    assert any(not np.allclose(rows[k], average[k], rtol=1e-6) for k in rows)


# ---- invariants ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["pcfr+", "dcfr+", "pdcfr+", "hs-pcfr+", "sapcfr+", "apcfr+", "apdcfr+"])
def test_plus_regrets_stay_non_negative_and_strategies_are_distributions(name, leduc):
    solver = make_solver(name, leduc)
    for _ in range(25):
        solver.iterate()
        for p in (0, 1):
            assert (solver.store.regrets[p] >= 0).all()
            view = leduc.views[p]
            sigma = solver.store.strategy(p)
            sums = np.add.reduceat(sigma[1:], view.infoset_first - 1)
            np.testing.assert_allclose(sums, 1.0, rtol=1e-12)


def test_hs_dcfr_keeps_negative_regrets():
    solver = make_solver("hs-dcfr", rcfr.load_game("kuhn"))
    solver.run(20)
    assert min(r.min() for r in solver.store.regrets) < 0


@pytest.mark.parametrize("power", [0.0, 2.0, 5.0])
def test_a_constant_schedule_averages_like_its_power(power, kuhn):
    """((t-1)/t)^gamma discounting of the running sum weights iteration t by t^gamma, as documented."""
    runs = []
    for averaging in (power, Linear(power, power, 10)):
        solver = CFRSolver(kuhn, DiscountedTable(predictive=True), averaging=averaging)
        solver.run(30)
        runs.append(solver.average_policy().probs)
    np.testing.assert_allclose(runs[0], runs[1], rtol=1e-11, atol=1e-14)


def test_schedules_follow_the_papers_values():
    assert Linear(30, 25, 1000)(0) == 30 and Linear(30, 25, 1000)(500) == 27.5
    assert Linear(30, 25, 1000)(5000) == 25  # held past the horizon
    assert Linear(1, 4, 100)(50) == 2.5 and Linear(-1, -3, 100)(50) == -2


def resumed_pair(name, game, total, split, **options):
    """A run of `total` iterations, and one checkpointed after `split` and resumed to `total`: both, after
    checking that their policies and regrets are equal bit for bit."""
    straight = make_solver(name, game, **options).run(total)
    first = make_solver(name, game, **options).run(split)
    resumed = make_solver(name, game, **options)
    resumed.load_state_dict(first.state_dict())
    resumed.run(total - split)
    np.testing.assert_array_equal(straight.average_policy().probs, resumed.average_policy().probs)
    np.testing.assert_array_equal(straight.current_policy().probs, resumed.current_policy().probs)
    for p in (0, 1):
        np.testing.assert_array_equal(straight.store.regrets[p], resumed.store.regrets[p])
    return straight, resumed


@pytest.mark.parametrize("name", ["pdcfr+", "sapcfr+", "apcfr+", "apdcfr+"])
def test_checkpoint_resumes_a_predictive_run_exactly(name, kuhn):
    resumed_pair(name, kuhn, 20, 11)


def test_a_checkpoint_without_the_adaptive_state_is_refused(kuhn):
    """Negative control of the resume test: the adaptive sums are part of the checkpoint."""
    state = make_solver("apcfr+", kuhn).run(5).state_dict()
    del state["store.errors0"]
    with pytest.raises((KeyError, ValueError)):
        make_solver("apcfr+", kuhn).load_state_dict(state)


def test_the_asymmetry_is_recorded_and_checked_on_resume(kuhn):
    state = make_solver("sapcfr+", kuhn, asymmetry=2.0).run(3).state_dict()
    assert json.loads(str(state["options"]))["asymmetry"] == 2.0
    with pytest.raises(ValueError, match="asymmetry"):
        make_solver("sapcfr+", kuhn, asymmetry=1.0).load_state_dict(state)


def test_a_checkpoint_from_before_an_option_existed_still_resumes(kuhn):
    """Options added later default to None: a saved description without them is the same options."""
    solver = make_solver("cfr+", kuhn).run(3)
    state = solver.state_dict()
    saved = json.loads(str(state["options"]))
    del saved["asymmetry"]
    state["options"] = np.array(json.dumps(saved, sort_keys=True))
    resumed = make_solver("cfr+", kuhn)
    resumed.load_state_dict(state)
    saved["regret_matching"] = "rm"  # a real difference is still refused
    state["options"] = np.array(json.dumps(saved, sort_keys=True))
    with pytest.raises(ValueError, match="regret_matching"):
        make_solver("cfr+", kuhn).load_state_dict(state)


# ---- convergence -------------------------------------------------------------------------------------
# measured at 1,000 iterations (docs/tabular_frontier.md), thresholds with headroom
KUHN = {"pcfr+": 1e-6, "dcfr+": 3e-4, "pdcfr+": 1e-10, "hs-dcfr": 1e-3, "hs-pcfr+": 1e-12, "sapcfr+": 1e-7,
        "apcfr+": 1e-7, "apdcfr+": 1e-12}
LEDUC = {"pcfr+": 2e-3, "dcfr+": 4e-4, "pdcfr+": 2e-3, "hs-dcfr": 1.5e-3, "hs-pcfr+": 2e-3, "sapcfr+": 4e-4,
         "apcfr+": 4e-4, "apdcfr+": 4e-4}


@pytest.mark.parametrize("name", NEW)
def test_convergence_on_kuhn_and_leduc(name, kuhn, leduc):
    for game, limit in ((kuhn, KUHN[name]), (leduc, LEDUC[name])):
        solver = make_solver(name, game).run(1000)
        assert rcfr.exploitability(game, solver.average_policy()) < limit, (name, game)


# ---- loud options ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,options,field", [
    ("dcfr+", {"alpha": -1.0}, "alpha"), ("pdcfr+", {"alpha": float("nan")}, "alpha"),
    ("hs-pcfr+", {"horizon": 0}, "horizon"), ("hs-dcfr", {"horizon": 2.5}, "horizon"),
    ("hs-pcfr+", {"gamma_start": 4}, "gamma_start"), ("pcfr+", {"averaging": "cubic"}, "averaging"),
    ("sapcfr+", {"asymmetry": float("nan")}, "asymmetry"), ("sapcfr+", {"asymmetry": -1.0}, "asymmetry"),
    ("sapcfr+", {"asymmetry": 6.0}, "asymmetry"), ("sapcfr+", {"asymmetry": "adaptive"}, "asymmetry"),
    ("sapcfr+", {"asymmetry": None}, "asymmetry"), ("apdcfr+", {"alpha": -0.5}, "alpha"),
    ("apdcfr+", {"alpha": float("inf")}, "alpha"), ("apcfr+", {"averaging": float("nan")}, "averaging"),
])
def test_bad_options_fail_naming_the_field(name, options, field, kuhn):
    with pytest.raises(ValueError, match=field):
        make_solver(name, kuhn, **options)


def test_an_asymmetry_without_a_prediction_is_refused():
    with pytest.raises(ValueError, match="predictive"):
        DiscountedTable(asymmetry=2.0)
    with pytest.raises(ValueError, match="asymmetry"):
        DiscountedTable(predictive=True, asymmetry="fixed")


def test_unknown_options_name_the_allowed_ones(kuhn):
    with pytest.raises((TypeError, ValueError), match="horizon"):
        make_solver("hs-pcfr+", kuhn, horizn=10)


def test_the_new_solvers_are_registered():
    assert set(NEW) <= set(SOLVERS)


# ---- the presets -------------------------------------------------------------------------------------
@pytest.mark.slow  # composes each solver's job: ~10 s
@pytest.mark.parametrize("preset,games,iterations,horizon", [
    ("tabular_frontier", 11, 20000, 20000), ("tabular_frontier_quick", 5, 1000, 1000)])
def test_presets_cover_every_game_and_solver(preset, games, iterations, horizon):
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from rcfr.experiments.callbacks import sweep_jobs
    from rcfr.experiments.run import CONFIG_DIR
    from rcfr.experiments.schema import validate

    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
            cfg = compose("config", overrides=[f"+experiment={preset}"], return_hydra_config=True)
            jobs = sweep_jobs(cfg)
            first = {}
            for job in jobs:  # one job per solver composes and validates
                first.setdefault(next(o for o in job if o.startswith(("+arm=", "solver="))), job)
            specs = [validate(compose("config", overrides=job)) for job in first.values()]
    finally:
        GlobalHydra.instance().clear()
    solvers = {"cfr", "cfr+", "lcfr", "dcfr", *NEW, "ddcfr"}
    assert len(jobs) == games * len(solvers) == len({tuple(sorted(j)) for j in jobs})
    assert {s.solver.name for s in specs} == solvers
    assert {s.run.iterations for s in specs} == {iterations}
    assert {s.solver.options["horizon"] for s in specs if s.solver.name.startswith("hs-") or
            s.solver.name == "ddcfr"} == {horizon}
