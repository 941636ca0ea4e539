"""Audit cases of issue 19: each bad input that was silently wrong, or crashed with a raw Python error, on main
now fails loudly before any work, naming what is wrong."""

import json
import math

import numpy as np
import pytest

import rcfr
from rcfr import Policy, PolicyError, exploitability, make_solver


@pytest.fixture(scope="module")
def kuhn():
    return rcfr.load_game("kuhn")


# ---- averaging that overflows or is NaN ----------------------------------------------------------------
@pytest.mark.parametrize("name", ["cfr", "cfr+", "lcfr", "dcfr", "cscfr", "os-mccfr", "es-mccfr"])
@pytest.mark.parametrize("averaging", [math.nan, 300, math.inf, -1.0])
def test_averaging_out_of_range_is_refused_before_any_work(kuhn, name, averaging):
    # main: 300 crashed with OverflowError mid-run; NaN ran and returned the uniform average policy
    with pytest.raises(ValueError, match="averaging must be one of uniform, linear, quadratic or a finite power"):
        make_solver(name, kuhn, averaging=averaging)


@pytest.mark.parametrize("name, option", [("dcfr", "alpha"), ("dcfr", "beta")])
def test_discounts_that_overflow_are_refused(kuhn, name, option):
    with pytest.raises(ValueError, match=f"{option} must be a finite number in \\[0, 20\\]"):
        make_solver(name, kuhn, **{option: 300.0})


@pytest.mark.parametrize("name, options", [("rcfr", {"regressor": "table", "features": "indicator"}),
                                           ("os-mccfr", {}), ("sampled-rcfr", {"regressor": "table"})])
def test_a_seed_that_is_not_an_integer_is_refused(kuhn, name, options):
    with pytest.raises(ValueError, match="seed must be an integer in \\[0, "):
        make_solver(name, kuhn, seed="x", **options)


# ---- raw crashes become errors that say what to pass ---------------------------------------------------
def test_a_game_name_instead_of_a_game(kuhn):
    for name in ("cfr+", "os-mccfr", "rcfr", "sampled-rcfr"):
        with pytest.raises(TypeError, match="game must be a compiled rcfr.Game, got str 'kuhn' .*load_game"):
            make_solver(name, "kuhn")


def test_exploitability_of_no_policy(kuhn):
    with pytest.raises(TypeError, match="policy must be an rcfr.Policy .*got NoneType"):
        exploitability(kuhn, None)
    with pytest.raises(TypeError, match="game must be a game from rcfr.load_game"):
        exploitability("kuhn", Policy.uniform(kuhn))


def test_a_one_dimensional_feature_array(kuhn):
    from rcfr.features import make_features
    with pytest.raises(ValueError, match="features array must be 2-D"):
        make_features(kuhn, np.ones(kuhn.num_sequences))
    with pytest.raises(ValueError, match="features array must be 2-D"):
        make_solver("rcfr", kuhn, regressor="table", features=np.ones(kuhn.num_sequences)).run(1)


def test_openspiel_conversions_of_wrong_objects(kuhn):
    pytest.importorskip("pyspiel")
    with pytest.raises(TypeError, match="os_game must be an OpenSpiel game"):
        Policy.uniform(kuhn).to_openspiel(5)
    with pytest.raises(TypeError, match="tabular must be an OpenSpiel TabularPolicy"):
        Policy.from_openspiel(kuhn, None)


# ---- policies ------------------------------------------------------------------------------------------
def test_a_policy_is_read_only_after_validation(kuhn):
    probs = np.full(kuhn.num_sequences, 0.5)
    policy = Policy(kuhn, probs)
    with pytest.raises(ValueError, match="read-only"):
        policy.probs[0] = 7.0
    probs[0] = 7.0  # the caller's array is not the policy's
    assert policy.probs[0] == 0.5
    solved = make_solver("cfr", kuhn).run(2).average_policy()
    with pytest.raises(ValueError, match="read-only"):
        solved.probs[:] = 0.0


def test_a_json_policy_without_its_game_is_refused_unless_hand_written(tmp_path):
    ante2, ante1 = rcfr.load_game("leduc", ante=2), rcfr.load_game("leduc", ante=1)
    data = Policy.uniform(ante2).to_dict()
    del data["game"]
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(data))
    with pytest.raises(PolicyError, match="no 'game' field.*require_game=False"):
        Policy.load(ante1, path)  # main: loaded into the other game without a word
    with pytest.raises(PolicyError, match="no 'game' field"):
        Policy.from_dict(ante1, data)
    assert Policy.load(ante1, path, require_game=False).game is ante1  # a hand-written file, on purpose
    data["game"] = ante2.rules.description()
    with pytest.raises(PolicyError, match="policy is for game"):
        Policy.from_dict(ante1, data, require_game=False)  # a file that names its game must name this one


def test_a_save_that_cannot_be_written_names_the_target(kuhn, tmp_path):
    target = tmp_path / "taken.json"
    target.mkdir()  # a directory where the file should go
    with pytest.raises(OSError) as err:
        Policy.uniform(kuhn).save(target)
    assert str(target) in str(err.value) and ".tmp" not in str(err.value)
    assert not any(p.name.endswith(".tmp") for p in tmp_path.iterdir())
    blocked = tmp_path / "file"
    blocked.write_text("")
    with pytest.raises(OSError) as err:
        Policy.uniform(kuhn).save(blocked / "policy.npz")
    assert "policy.npz" in str(err.value)


# ---- regressors ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("weights", [-np.ones(20), np.zeros(20), np.r_[np.ones(19), np.nan]])
def test_lightgbm_refuses_weights_every_other_regressor_refuses(weights):
    pytest.importorskip("lightgbm")
    X, y = np.random.default_rng(0).random((20, 3)), np.arange(20.0)
    for name in ("lightgbm", "best_first"):
        with pytest.raises(ValueError, match="(?i)weight"):
            rcfr.make_regressor(name).fit(X, y, sample_weight=weights)


def test_lightgbm_still_fits_and_clones():
    pytest.importorskip("lightgbm")
    from sklearn.base import clone
    X, y = np.random.default_rng(0).random((30, 2)), np.arange(30.0)
    model = rcfr.make_regressor("lightgbm", n_estimators=3, num_leaves=4).fit(X, y, sample_weight=np.ones(30))
    assert model.predict(X).shape == (30,) and type(clone(model)) is type(model)


# ---- search --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("options, message", [
    ({"simulations": 0}, "simulations must be an integer >= 1"),
    ({"simulations": -5}, "simulations must be an integer >= 1"),
    ({"simulations": math.nan}, "simulations must be an integer >= 1"),
    ({"seconds": 0.0}, "seconds must be a finite number in \\(0, "),
    ({"seconds": -1.0}, "seconds must be a finite number in \\(0, "),
    ({"seconds": math.inf}, "seconds must be a finite number in \\(0, "),
])
def test_mcts_refuses_an_empty_or_endless_budget(options, message):
    from rcfr.search import load_search_game, make_searcher
    game = load_search_game("pig", goal=20)
    with pytest.raises(ValueError, match=message):
        make_searcher("mcts", game, **options)


def test_mcts_refuses_terminal_and_nonsense_states():
    from rcfr.search import load_search_game, make_searcher
    game = load_search_game("pig", goal=20)
    searcher = make_searcher("mcts", game, simulations=8)
    with pytest.raises(ValueError, match="is terminal"):
        searcher.decide((25, 3, 0, 0))  # main: (0, nan, 0)
    for state in (None, "hello"):
        with pytest.raises(ValueError, match="is not a state of pig"):
            searcher.decide(state)
    action, value, simulations = searcher.decide(game.initial())
    assert simulations == 8 and math.isfinite(value)
