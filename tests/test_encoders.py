"""On-demand features (`features.encoders`): an information-set function, equal to the dense matrix."""

import copy

import numpy as np
import pytest
from numba import njit

import rcfr
from features import feature_matrix
from features.encoders import ENCODERS, FeatureEncoder, make_encoder, sequence_rows
from rcfr.games.goofspiel_fast import BID0

#: A small instance of a game each registered encoder serves.
SMALL = {"goofspiel": ("goofspiel", {"cards": 4, "points_order": "random", "seed": 3})}


def test_every_encoder_has_a_small_game():
    assert sorted(ENCODERS) == sorted(SMALL)


def _with_histories(game, pick):
    """A shallow copy of `game` whose information sets are represented by the histories `pick` chooses."""
    decisions = np.flatnonzero(game.player >= 0)
    chosen = np.full(game.num_infosets, -1, np.int64)
    for h in pick(decisions):
        chosen[game.infoset[h]] = h
    assert (chosen >= 0).all()
    other = copy.copy(game)
    other.__dict__["infoset_history"] = chosen
    return other


@pytest.mark.parametrize("name", sorted(SMALL))
def test_rows_depend_only_on_what_the_actor_knows(name):
    game_name, params = SMALL[name]
    game = rcfr.load_game(game_name, **params)
    encoder = make_encoder(game, name)
    rows = sequence_rows(game, encoder, np.arange(game.num_sequences))
    rng = np.random.default_rng(0)
    for pick in (lambda d: d, lambda d: rng.permutation(d)):  # last, then a random history of each set
        other = _with_histories(game, pick)
        assert not np.array_equal(other.infoset_history, game.infoset_history)
        np.testing.assert_array_equal(sequence_rows(other, encoder, np.arange(game.num_sequences)), rows)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_on_demand_rows_equal_the_dense_matrix(name):
    game_name, params = SMALL[name]
    game = rcfr.load_game(game_name, **params)
    dense = feature_matrix(game, name)
    assert dense.matrix.shape == (game.num_sequences, make_encoder(game, name).num_features)
    assert np.isfinite(dense.matrix).all() and np.abs(dense.matrix).max() <= 1.0
    assert len(np.unique(dense.matrix, axis=0)) == game.num_sequences  # distinct sequences, distinct rows
    picks = np.random.default_rng(1).integers(0, game.num_sequences, 500)  # unsorted, with repeats
    np.testing.assert_array_equal(sequence_rows(game, make_encoder(game, name), picks), dense.matrix[picks])


def test_goofspiel_rows_read_back_the_key():
    """Each set's key ``p:own bids|results`` is recoverable from its rows."""
    game = rcfr.load_game("goofspiel", cards=5)
    dense = feature_matrix(game, "goofspiel")
    col = {n: i for i, n in enumerate(dense.names)}
    for i in range(game.num_infosets):
        row = dense.matrix[game.infoset_first_seq[i]]
        player, rest = game.infoset_key(i).split(":")
        bids, results = rest.split("|")
        bids = [int(b) for b in bids.split()]
        assert row[col[f"player{player}"]] == 1.0
        for t, (bid, result) in enumerate(zip(bids, results)):
            assert row[col[f"turn{t}.bid"]] * 5 == pytest.approx(bid)
            assert row[col[f"turn{t}.{dict(W='won', T='tied', L='lost')[result]}"]] == 1.0
        hand = [c for c in range(1, 6) if c not in bids]
        assert [c for c in range(1, 6) if row[col[f"hand{c}"]]] == hand
        for a, action in enumerate(game.actions_of(i)):
            assert dense.matrix[game.infoset_first_seq[i] + a, col[f"bid={action}"]] == 1.0


def test_bad_requests_fail_clearly():
    game = rcfr.load_game("goofspiel", cards=3)
    encoder = make_encoder(game, "goofspiel")
    with pytest.raises(ValueError, match=r"sequence ids must lie in \[0, "):
        sequence_rows(game, encoder, [game.num_sequences])
    with pytest.raises(ValueError, match="unknown encoder 'chess'; allowed: goofspiel"):
        make_encoder(game, "chess")
    with pytest.raises(ValueError, match="unknown option.*'depth'"):
        make_encoder(game, "goofspiel", depth=2)
    with pytest.raises(ValueError, match="need goofspiel rules"):
        make_encoder(rcfr.load_game("kuhn"), "goofspiel")
    with pytest.raises(ValueError, match="out must be float64"):
        sequence_rows(game, encoder, [0, 1], out=np.zeros((2, 1)))
    assert isinstance(encoder, FeatureEncoder)


@njit(cache=True)
def _leaky_encode(data, s, action, out):
    """A negative control: player 1's rows see player 0's hidden bid of this turn."""
    out[0] = s[BID0]


def test_the_information_check_catches_a_leak():
    game = rcfr.load_game("goofspiel", cards=4)
    leaky = FeatureEncoder(("hidden_bid",), game.rules.fast().data, _leaky_encode)
    rows = sequence_rows(game, leaky, np.arange(game.num_sequences))
    other = _with_histories(game, lambda d: d)
    assert not np.array_equal(sequence_rows(other, leaky, np.arange(game.num_sequences)), rows)
