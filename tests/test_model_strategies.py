"""Strategies from a compiled model at a set's game state equal the lean path's batch strategies: the
profile that ``profile="cache"`` refreshes after each refit, for every information set of each player."""

import numpy as np
import pytest

import rcfr
from rcfr.features.encoders import infoset_states
from rcfr.regressors.compiled import compile_model
from rcfr.solvers import make_solver
from rcfr.solvers.model_strategies import model_strategies

GAMES = {"kuhn": ("kuhn", {}, "poker"), "leduc": ("leduc", {}, "poker"),
         "goofspiel4": ("goofspiel", {"cards": 4, "points_order": "random", "seed": 3}, "goofspiel")}
OPTIONS = {"targets": "reservoir", "capacity": 400, "traversals": 2, "refit_every": 3, "seed": 5,
           "profile": "cache", "features_on_demand": True}


@pytest.fixture(scope="module")
def games():
    return {key: rcfr.load_game(name, **params) for key, (name, params, _) in GAMES.items()}


def _solver(game, features, regressor, iterations=9, name="sampled-rcfr", **options):
    return make_solver(name, game, features=features, regressor=regressor, **{**OPTIONS, **options}).run(iterations)


def _both(solver, player, model=None, t=None):
    """(compiled strategies, the profile's) of every set of `player`."""
    game = solver.game
    sets = np.flatnonzero(np.asarray(game.infoset_player) == player)
    first, sizes = solver.first_seq[sets], solver.num_actions[sets]
    model = compile_model(solver.regressors[player]) if model is None else model
    t = solver.fits[player]["count"][1] if t is None else t
    ours = model_strategies(model, solver.encoder, infoset_states(game, sets), sizes, t)
    theirs = np.concatenate([solver.buffers.sigma[f:f + n] for f, n in zip(first, sizes)])
    return ours, theirs


@pytest.mark.parametrize("name", sorted(GAMES))
def test_compiled_strategies_equal_the_lean_profile_bit_for_bit(games, name):
    solver = _solver(games[name], GAMES[name][2], {"name": "best_first", "max_leaves": 8})
    for p in (0, 1):
        assert solver.fits[p]["count"][1] > 0  # fit: the profile is not the uniform start
        ours, theirs = _both(solver, p)
        assert np.array_equal(ours, theirs), name
        assert np.ptp(theirs) > 0


def test_rcfr_plus_with_stored_targets_too(games):
    solver = _solver(games["leduc"], "poker", {"name": "best_first", "max_leaves": 16}, name="sampled-rcfr+",
                     targets="stored")
    for p in (0, 1):
        ours, theirs = _both(solver, p)
        assert np.array_equal(ours, theirs) and np.ptp(theirs) > 0


@pytest.mark.slow  # LightGBM and torch fits: 15-25 s each under load
@pytest.mark.parametrize("regressor", [{"name": "lightgbm", "n_estimators": 4, "num_leaves": 4, "min_child_samples": 5},
                                       {"name": "linear"}, {"name": "mlp", "hidden": [8], "epochs": 3}],
                         ids=lambda r: r["name"])
def test_compiled_strategies_of_other_models_equal_to_rounding(games, regressor):
    solver = _solver(games["leduc"], "poker", regressor, iterations=6)
    for p in (0, 1):
        ours, theirs = _both(solver, p)
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)


def test_another_model_or_iteration_gives_other_strategies(games):
    """Negative controls: the other player's model, or t = 0 (uniform), do not reproduce the profile."""
    solver = _solver(games["leduc"], "poker", {"name": "best_first", "max_leaves": 8})
    other = compile_model(solver.regressors[1])
    ours, theirs = _both(solver, 0, model=other)
    assert not np.allclose(ours, theirs)
    uniform, theirs = _both(solver, 0, t=0)
    assert not np.allclose(uniform, theirs)
    sizes = solver.num_actions[np.flatnonzero(np.asarray(solver.game.infoset_player) == 0)]
    assert np.allclose(uniform, np.repeat(1.0 / sizes, sizes))


def test_a_model_of_another_width_is_refused(games):
    from rcfr.regressors import BestFirstTree
    solver = _solver(games["kuhn"], "poker", {"name": "best_first", "max_leaves": 4}, iterations=3)
    width = solver.encoder.num_features
    wrong = compile_model(BestFirstTree(max_leaves=2).fit(np.eye(width + 1), np.arange(width + 1.0)))
    with pytest.raises(ValueError, match=f"reads rows of {width + 1} features but the encoder writes {width}"):
        model_strategies(wrong, solver.encoder, np.zeros((1, 4), np.int64), np.ones(1, np.int64), 1.0)
    with pytest.raises(TypeError, match="must be a CompiledModel"):
        model_strategies(solver.regressors[0], solver.encoder, np.zeros((1, 4), np.int64), np.ones(1, np.int64), 1.0)


@pytest.mark.slow  # the sampling driver on the rules' state source (a minute to compile cold)
def test_on_the_rules_path_from_the_states_kept_per_set():
    """Bluff(1,1) walked by its rules: the states the buffers keep per set give each set's refreshed strategy."""
    from rcfr.solvers.lean_rules import PLAYER
    game = rcfr.load_game("liars_dice", dice1=1, dice2=1, compiled=False)
    solver = make_solver("sampled-rcfr+", game, features_on_demand=True, features="liars_dice", targets="stored",
                         capacity=500, refit_every=3, traversals=2, seed=2,
                         regressor={"name": "best_first", "max_leaves": 16}).run(9)
    solver.current_policy()  # refreshes every set met from the model
    tree = solver.buffers.tree
    for p in (0, 1):
        sets = solver._player_sets(p)
        sizes = tree.num_actions[sets]
        ours = model_strategies(compile_model(solver.regressors[p]), solver.encoder, tree.set_states[sets, :PLAYER],
                                sizes, solver.fits[p]["count"][1])
        theirs = np.concatenate([solver.buffers.state.sigma[f:f + n] for f, n in zip(tree.first_seq[sets], sizes)])
        assert len(sets) > 10 and np.array_equal(ours, theirs) and np.ptp(theirs) > 0
