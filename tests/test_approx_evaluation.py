"""Evaluation past exact best response (`rcfr.evaluation.approx`): the sampled responders' value is a lower
bound on the exact exploitability (exactly when scored by a walk, within its CI when scored by play-outs),
it closes the gap as the budget grows, and head-to-head matches are unbiased estimates of the exact value
of a against b (a biased estimator, one seating only, is caught by the same check)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rcfr
from rcfr import Policy
from rcfr.evaluation import rules as rules_eval
from rcfr.policy.rules import CodePolicy

_games: dict = {}


def game(name, **params):
    key = (name, tuple(sorted(params.items())))
    if key not in _games:
        _games[key] = rcfr.load_game(name, **params)
    return _games[key]


def cfr_average(g, iterations=3):
    solver = rcfr.make_solver("cfr", g)
    solver.run(iterations)
    return solver.average_policy()


def policies(g):
    return {"uniform": Policy.uniform(g), "random": Policy.random(g, seed=7), "cfr3": cfr_average(g)}


def versus(g, a, b):
    """Exact: a's payoff per game against b, both seatings averaged."""
    first = rcfr.expected_value(g, Policy.from_local(g, [a.local(0), b.local(1)]))
    second = rcfr.expected_value(g, Policy.from_local(g, [b.local(0), a.local(1)]))
    return (first - second) / 2


@pytest.mark.parametrize("name,budget", [("kuhn", 500), ("leduc", 5_000)])
@pytest.mark.parametrize("method", ["es-br", "os-br"])
def test_never_above_exact_when_scored_exactly(name, budget, method):
    g = game(name)
    for label, policy in policies(g).items():
        exact = rcfr.exploitability(g, policy)
        for seed in range(3):
            got = rcfr.approx_exploitability(g, policy, method, budget, seed)
            assert got.ci95 == 0.0 and got.evaluation == "exact"
            assert -1e-12 <= got.exploitability <= exact + 1e-12, (label, seed)  # each v_i >= the policy's
            assert min(got.nodes_touched) >= budget and min(got.traversals) > 0
    enumerated = rcfr.approx_exploitability(g, policy, method, budget, 0, chance="enumerate")
    assert -1e-12 <= enumerated.exploitability <= exact + 1e-12


@pytest.mark.parametrize("name", ["kuhn", "leduc"])
def test_never_above_exact_beyond_its_ci_when_sampled(name):
    g = game(name)
    for label, policy in policies(g).items():
        exact = rcfr.exploitability(g, policy)
        for seed in range(2):
            got = rcfr.approx_exploitability(g, policy, "es-br", 20_000, seed, samples=4_000,
                                             evaluation="sampled")
            assert got.ci95 > 0 and got.samples == 4_000
            assert got.low <= exact, (label, seed, got)


def test_gets_close_with_a_larger_budget():
    """Kuhn: within 0.002 chips at 20,000 nodes touched per player (exact for uniform and CFR's average);
    Leduc (CFR after 3 iterations, 1.80 chips): 1.2 chips short at 3,000 nodes touched per player, 0.23 at
    30,000, 0.025 at 300,000 (the largest gap over seeds 0-2)."""
    kuhn = game("kuhn")
    for policy in policies(kuhn).values():
        got = rcfr.approx_exploitability(kuhn, policy, budget=20_000)
        assert 0 <= rcfr.exploitability(kuhn, policy) - got.exploitability < 0.002
    leduc = game("leduc")
    policy = cfr_average(leduc)
    exact = rcfr.exploitability(leduc, policy)
    small = rcfr.approx_exploitability(leduc, policy, budget=3_000)
    large = rcfr.approx_exploitability(leduc, policy, budget=300_000)
    assert exact - large.exploitability < 0.05
    assert exact - small.exploitability > exact - large.exploitability


def test_a_rules_game():
    rules_game = rcfr.load_game("kuhn", compiled=False)
    policy = CodePolicy.from_policy(cfr_average(game("kuhn")))
    exact = rules_eval.exploitability(rules_game.rules, policy)
    sampled = rcfr.approx_exploitability(rules_game, policy, "os-br", 20_000, samples=4_000)
    assert sampled.evaluation == "sampled" and sampled.low <= exact <= sampled.high
    walked = rcfr.approx_exploitability(rules_game, policy, "es-br", 20_000, evaluation="exact")
    assert abs(walked.exploitability - exact) < 1e-9


def test_a_responder_short_of_visits_plays_the_policy():
    """Below min_visits a responder keeps the policy's own rows: with none reached, both responders play
    the policy itself, whose values sum to zero."""
    g = game("leduc")
    got = rcfr.approx_exploitability(g, cfr_average(g), "os-br", 2_000, min_visits=10 ** 9)
    assert got.best_infosets == (0, 0) and min(got.responder_infosets) > 0
    assert abs(got.exploitability) < 1e-12


@settings(max_examples=12)
@given(seed=st.integers(0, 2 ** 31), budget=st.integers(20, 3_000), method=st.sampled_from(["es-br", "os-br"]))
def test_random_policies_bounded(seed, budget, method):
    g = game("kuhn")
    policy = Policy.random(g, seed=seed)
    got = rcfr.approx_exploitability(g, policy, method, budget, seed % 1000)
    assert got.exploitability <= rcfr.exploitability(g, policy) + 1e-12


# ---- matches -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,chance", [("kuhn", "sample"), ("leduc", "sample"),
                                         pytest.param("leduc", "enumerate", marks=pytest.mark.slow)])
def test_match_is_unbiased(name, chance):
    g = game(name)
    a, b = cfr_average(g), Policy.random(g, seed=3)
    exact = versus(g, a, b)
    runs = [rcfr.match_policies(g, a, b, 2_000, seed, chance=chance) for seed in range(4)]
    mean = np.mean([r.value for r in runs])
    half = math.sqrt(sum(r.ci95 ** 2 for r in runs)) / len(runs)
    assert abs(mean - exact) <= half, (mean, exact, half)


def pure(g, seed):
    """A deterministic policy: one random action per information set."""
    rows = np.random.default_rng(seed).random(g.num_sequences)
    best = np.zeros(g.num_sequences)
    for i in range(g.num_infosets):
        lo = g.infoset_first_seq[i]
        best[lo + int(np.argmax(rows[lo:lo + g.infoset_num_actions[i]]))] = 1.0
    return Policy(g, best)


@pytest.mark.parametrize("name", ["kuhn", "leduc"])
def test_pure_policies_with_chance_enumerated_give_the_exact_value(name):
    """With both players deterministic and every chance outcome walked, each play-out is the exact value."""
    g = game(name)
    a, b = pure(g, 1), pure(g, 2)
    got = rcfr.match_policies(g, a, b, 3, 0, chance="enumerate")
    assert abs(got.value - versus(g, a, b)) < 1e-12 and got.ci95 < 1e-12


def test_enumerating_chance_narrows_the_interval():
    g = game("leduc")
    a, b = cfr_average(g), Policy.uniform(g)
    sampled = rcfr.match_policies(g, a, b, 2_000, 0)
    enumerated = rcfr.match_policies(g, a, b, 2_000, 0, chance="enumerate")
    assert enumerated.ci95 < sampled.ci95


def test_one_seating_only_is_caught():
    """Negative control: a against itself is worth exactly 0; the estimator that plays one seating only
    measures the first player's edge instead, and the same check rejects it."""
    g = game("kuhn")
    a = cfr_average(g)
    assert abs(versus(g, a, a)) < 1e-12
    match = rcfr.match_policies(g, a, a, 20_000, 0)
    assert abs(match.value) <= match.ci95
    assert abs(match.seat_values[0]) > match.seat_ci95[0]


def test_match_on_a_rules_game():
    kuhn = game("kuhn")
    a, b = cfr_average(kuhn), Policy.uniform(kuhn)
    rules_game = rcfr.load_game("kuhn", compiled=False)
    got = rcfr.match_policies(rules_game, CodePolicy.from_policy(a), CodePolicy.from_policy(b), 4_000, 1)
    assert abs(got.value - versus(kuhn, a, b)) <= got.ci95


# ---- bad input, refused before any work -------------------------------------------------------------
@pytest.mark.parametrize("kwargs,words", [
    ({"method": "br"}, "method"), ({"budget": 0}, "budget"), ({"budget": 1.5}, "budget"),
    ({"seed": -1}, "seed"), ({"samples": True}, "samples"), ({"evaluation": "walk"}, "evaluation"),
    ({"eps": 0.0}, "eps"), ({"default": "zero"}, "default"), ({"min_visits": 0}, "min_visits"),
    ({"chance": "all"}, "chance"),
])
def test_bad_options(kwargs, words):
    g = game("kuhn")
    with pytest.raises(ValueError, match=words):
        rcfr.approx_exploitability(g, Policy.uniform(g), **kwargs)


def test_another_games_policy_is_refused():
    kuhn, leduc = game("kuhn"), game("leduc")
    with pytest.raises(ValueError, match="Leduc|leduc"):
        rcfr.approx_exploitability(kuhn, Policy.uniform(leduc))
    with pytest.raises(ValueError, match="policy_b"):
        rcfr.match_policies(kuhn, Policy.uniform(kuhn), Policy.uniform(leduc))
    with pytest.raises(TypeError, match="policy"):
        rcfr.approx_exploitability(kuhn, "uniform")
    with pytest.raises(ValueError, match="chance"):
        rcfr.match_policies(kuhn, Policy.uniform(kuhn), Policy.uniform(kuhn), chance="all")


def test_a_traversal_over_the_budget_names_the_alternative():
    g = game("leduc")
    with pytest.raises(ValueError, match="os-br"):
        rcfr.approx_exploitability(g, Policy.uniform(g), "es-br", budget=5)


# ---- the experiment kit: run.measure=approx_exploitability ------------------------------------------
def kit_config(**run):
    return {"game": {"name": "kuhn"}, "solver": {"name": "cfr+"},
            "run": {"iterations": 20, "eval_points": 3, "seed": 0, "checkpoint_seconds": 1e9, "progress": False,
                    "measure": "approx_exploitability", "approx": {"budget": 2_000, "method": "os-br"}, **run}}


def test_kit_measure_is_a_lower_bound_per_evaluation(tmp_path):
    import csv

    from rcfr.experiments.runner import run_experiment

    summary = run_experiment(kit_config(), tmp_path)
    with (tmp_path / "metrics.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) >= 2 and summary["measure"] == "approx_exploitability"
    for row in rows:
        assert float(row["approx_exploitability"]) <= float(row["exploitability"]) + 1e-12
        assert float(row["approx_exploitability_ci95"]) == 0.0 and int(row["approx_nodes_touched"]) >= 4_000


@pytest.mark.parametrize("change,words", [
    ({"approx": {"budjet": 5}}, "budjet.*allowed: method, budget"),
    ({"approx": {"method": "cfr"}}, "run.approx: unknown method"),
    ({"approx": {"budget": 0}}, "budget"),
    ({"measure": "exploitability"}, "run.approx sets options of run.measure=approx_exploitability"),
])
def test_kit_refuses_bad_approx_options(change, words):
    from rcfr.experiments.schema import ConfigError, validate

    with pytest.raises(ConfigError, match=words):
        validate(kit_config(**change))


def test_a_game_without_a_fast_path_is_unsupported():
    g = rcfr.load_game("dieroll", faces=2, skew=0.5)  # compiled through its rule methods only
    with pytest.raises(ValueError, match="unsupported for .*has no fast path"):
        rcfr.approx_exploitability(g, Policy.uniform(g))
    with pytest.raises(ValueError, match="has no fast path"):
        rcfr.match_policies(g, Policy.uniform(g), Policy.uniform(g))


def test_a_near_equilibrium_policy_gets_a_useful_bound_at_the_default_budget():
    """Leduc after 30 CFR+ iterations (exploitability 0.082): the old default budget (1e5) returned exactly 0 without
    a word. The default now finds responders; each kept value is at least the policy's own (the policy is a
    responder too), and the bound stays below the exact exploitability."""
    g = game("leduc")
    solver = rcfr.make_solver("cfr+", g)
    solver.run(30)
    policy = solver.average_policy()
    exact = rcfr.evaluate(g, policy)
    got = rcfr.approx_exploitability(g, policy)
    own = (exact.value, -exact.value)
    assert all(v >= o - 1e-12 for v, o in zip(got.responder_values, own))
    assert got.informative and 0.5 * exact.exploitability < got.exploitability <= exact.exploitability + 1e-12


def test_a_bound_that_says_nothing_warns_and_says_so():
    from rcfr.evaluation.approx import UninformativeBound
    g = game("kuhn")
    solver = rcfr.make_solver("cfr+", g)
    solver.run(2000)  # within 1e-3 of an equilibrium: no responder beats it by much
    with pytest.warns(UninformativeBound, match="says nothing"):
        got = rcfr.approx_exploitability(g, solver.average_policy(), budget=50)
    assert not got.informative and got.exploitability == 0.0 and got.chosen == ("policy", "policy")
    import warnings
    with warnings.catch_warnings():  # negative control: the uniform policy is beaten, the bound is informative
        warnings.simplefilter("error", UninformativeBound)
        assert rcfr.approx_exploitability(g, Policy.uniform(g), budget=5_000).informative
