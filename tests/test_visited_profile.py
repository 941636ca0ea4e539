"""profile="visited" on the lean path: predicting only the sets a traversal reads changes the work, not the run."""

import numpy as np
import pytest

import rcfr
from rcfr.solvers import make_solver

OPTIONS = {"targets": "reservoir", "capacity": 300, "traversals": 2, "refit_every": 3, "seed": 5,
           "regressor": {"name": "best_first", "max_leaves": 8}}


@pytest.fixture(scope="module")
def games():
    return {"goofspiel": rcfr.load_game("goofspiel", cards=4, points_order="random", seed=3),
            "liars_dice": rcfr.load_game("liars_dice", dice1=1, dice2=1)}


def _lean(game, features, **options):
    return make_solver("sampled-rcfr", game, features_on_demand=True, features=features, **{**OPTIONS, **options})


def _same_run(a, b):
    for x, y in zip(a.reservoirs, b.reservoirs):
        assert x.seen == y.seen > 0
        for field in ("sequence", "regret", "iteration", "fill"):
            assert np.array_equal(getattr(x, field), getattr(y, field))
    assert np.array_equal(a.average_policy().probs, b.average_policy().probs)
    assert np.array_equal(a.current_policy().probs, b.current_policy().probs)
    assert a.nodes_touched == b.nodes_touched


@pytest.mark.parametrize("name", ["goofspiel", "liars_dice"])
@pytest.mark.parametrize("sampler", ["external", "outcome"])
def test_identical_to_the_profile_cache(games, name, sampler):
    """Same random stream, same strategies where read: bit-identical reservoirs and policies, and only the
    sets the traversals met were predicted (fewer than a full refresh after every refit)."""
    game = games[name]
    cache = _lean(game, name, sampler=sampler, profile="cache").run(24)
    visited = _lean(game, name, sampler=sampler, profile="visited").run(24)
    profile = visited.visited
    assert 0 < profile.predicted < 8 * game.num_infosets  # 8 refits per player, each refreshing every set
    _same_run(cache, visited)
    assert not np.array_equal(visited.current_policy().probs, rcfr.Policy.uniform(game).probs)  # it learned


def test_reading_stale_strategies_is_caught(games, monkeypatch):
    """Negative control: a refit that forgets to mark its sets stale leaves old strategies in the profile,
    and the run departs from the cache form's."""
    from rcfr.solvers.visited import VisitedProfile
    game = games["goofspiel"]
    cache = _lean(game, "goofspiel", profile="cache").run(24)
    monkeypatch.setattr(VisitedProfile, "stale", lambda self, player: None)
    forgetful = _lean(game, "goofspiel", profile="visited").run(24)
    assert not np.array_equal(cache.average_policy().probs, forgetful.average_policy().probs)


@pytest.mark.parametrize("sampler", ["external", "outcome"])
def test_resume_is_exact(games, sampler):
    game = games["liars_dice"]
    straight = _lean(game, "liars_dice", sampler=sampler, profile="visited").run(13)
    first = _lean(game, "liars_dice", sampler=sampler, profile="visited").run(7)  # between refits
    second = _lean(game, "liars_dice", sampler=sampler, profile="visited")
    second.load_state_dict(first.state_dict())
    second.run(6)
    cache = _lean(game, "liars_dice", sampler=sampler, profile="cache")
    cache.load_state_dict(first.state_dict())  # a checkpoint does not depend on the profile form
    cache.run(6)
    _same_run(straight, second)
    _same_run(cache, second)


def test_the_default_is_visited(games):
    assert _lean(games["goofspiel"], "goofspiel").visited is not None
    assert _lean(games["goofspiel"], "goofspiel", profile="cache").visited is None


@pytest.mark.parametrize("name", ["goofspiel", "liars_dice"])
def test_bound_rows_are_the_sequence_rows(games, name):
    from rcfr.features.encoders import bound_rows, make_encoder, sequence_rows
    game = games[name]
    encoder = make_encoder(game, name)
    sequences = np.random.default_rng(0).permutation(game.num_sequences)
    assert np.array_equal(bound_rows(game, encoder)(sequences), sequence_rows(game, encoder, sequences))


@pytest.mark.parametrize("options,message", [
    ({"features_on_demand": True, "profile": "lazy"}, "unknown profile .lazy.; allowed: cache, visited, model"),
    ({"profile": "visited"}, "needs features_on_demand=True"),
    ({"features_on_demand": True, "profile": "visited", "sampler": "probing"}, "with sampler='probing' the allowed"),
])
def test_bad_profile_fails_early(games, options, message):
    with pytest.raises(ValueError, match=message):
        make_solver("sampled-rcfr", games["goofspiel"], features="goofspiel", targets="reservoir", **options)
