"""On-demand features (`rcfr.features.encoders`): an information-set function, equal to the dense matrix."""

import copy

import numpy as np
import pytest
from numba import njit

import rcfr
from rcfr.features import auto_features, feature_matrix, make_features
from rcfr.features.encoders import (
    ENCODERS,
    FeatureEncoder,
    encode_rows,
    encoded_features,
    infoset_states,
    make_encoder,
    sequence_rows,
)
from rcfr.games.dice import FACE_NAMES
from rcfr.games.goofspiel_fast import BID0
from rcfr.solvers.model_strategies import _set_rows, row_coder

#: A small instance of a game each registered encoder serves.
SMALL = {"goofspiel": ("goofspiel", {"cards": 4, "points_order": "random", "seed": 3}),
         "liars_dice": ("liars_dice", {}),
         "latent_ttt": ("latent_ttt", {"opening": (4, 0, 8)}),
         "pam": ("pam", {"horizon": 2}),
         "poker": ("leduc", {"merge_suits": True})}  # merged suits: sets whose histories differ in suits
#: Morrill's poker columns are chips, not scaled to [-1, 1].
UNSCALED = {"poker"}


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
    assert np.isfinite(dense.matrix).all() and (name in UNSCALED or np.abs(dense.matrix).max() <= 1.0)
    assert len(np.unique(dense.matrix, axis=0)) == game.num_sequences  # distinct sequences, distinct rows
    picks = np.random.default_rng(1).integers(0, game.num_sequences, 500)  # unsorted, with repeats
    encoder = make_encoder(game, name)
    np.testing.assert_array_equal(sequence_rows(game, encoder, picks), dense.matrix[picks])
    sets = game.sequence_infoset[picks]  # a traversal's own states: no replay
    rows = encode_rows(encoder, infoset_states(game, sets), picks - game.infoset_first_seq[sets])
    np.testing.assert_array_equal(rows, dense.matrix[picks])


@njit
def _split_rows(coder, data, states, sizes, width):
    out = np.zeros((int(sizes.sum()), width))
    rows = np.zeros((int(sizes.max()), width))
    r = 0
    for i in range(states.shape[0]):
        _set_rows(coder, data, states[i], sizes[i], rows)
        for a in range(sizes[i]):
            out[r] = rows[a]
            r += 1
    return out


#: the encoders split into a set part and an action part (`FeatureEncoder.set_width`)
SPLIT = sorted(name for name in SMALL if make_encoder(rcfr.load_game(SMALL[name][0], **SMALL[name][1]), name).set_width)


def test_the_bid_encoder_is_split():
    assert "liars_dice" in SPLIT


@pytest.mark.parametrize("name", SPLIT)
def test_split_rows_are_the_encoders_rows(name):
    """A set's rows made from one set part and each action's part (`model_strategies._set_rows`, what the walks
    and the mixture evaluation call) equal ``encode``'s, bit for bit; control: a set width one short differs."""
    game_name, params = SMALL[name]
    game = rcfr.load_game(game_name, **params)
    encoder = make_encoder(game, name)
    sets = np.arange(0, game.num_infosets, max(1, game.num_infosets // 500))  # about 500 sets spread over the numbering
    states = infoset_states(game, sets)
    sizes = np.ascontiguousarray(game.infoset_num_actions[sets], np.int64)
    want = sequence_rows(game, encoder, np.concatenate([game.infoset_first_seq[i] + np.arange(n)
                                                        for i, n in zip(sets, sizes)]))
    coder = row_coder(encoder)
    np.testing.assert_array_equal(_split_rows(coder, encoder.data, states, sizes, encoder.num_features), want)
    short = coder._replace(set_width=coder.set_width - 1)
    assert not np.array_equal(_split_rows(short, encoder.data, states, sizes, encoder.num_features), want)


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
    with pytest.raises(ValueError, match="unknown encoder 'chess'; allowed: goofspiel, latent_ttt"):
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


@pytest.mark.parametrize("name, params", [("kuhn", {}), ("leduc", {}), ("leduc", {"ranks": 4, "suits": 3}),
                                          ("ocp", {"cards": 5}), ("nlocp", {"cards": 3, "stack": 5})])
def test_poker_encoder_reproduces_the_python_extractor(name, params):
    """The encoder replaced a Python extractor that replayed every information set through the rules
    (tests/poker_reference.py): same matrix, bit for bit, at both history lengths."""
    from poker_reference import extract
    game = rcfr.load_game(name, **params)
    for history in (None, 2):
        ref = extract(game, history=history)
        mine = encoded_features(game, make_encoder(game, "poker", **({} if history is None else {"history": history})))
        assert mine.names == ref.names
        np.testing.assert_array_equal(mine.matrix, ref.matrix)


def test_auto_features_are_the_games_own():
    assert auto_features(rcfr.load_game("kuhn")) == "poker"
    for name, (game_name, params) in SMALL.items():
        assert auto_features(rcfr.load_game(game_name, **params)) == name
    game = rcfr.load_game("pam", horizon=1)
    assert make_features(game).names == make_encoder(game, "pam").names
    assert auto_features(rcfr.load_game("dieroll", faces=2)) == "generic"  # a LimitPoker without cards


def _rows_by_name(game, name, **params):
    dense = feature_matrix(game, name, **params)
    col = {n: i for i, n in enumerate(dense.names)}
    return dense.matrix, col


def test_liars_dice_rows_read_back_the_key():
    """Key ``own dice|bids``: own dice, bids made and the recent bids come back; the action's bid too."""
    game = rcfr.load_game("liars_dice")
    rules = game.rules
    matrix, col = _rows_by_name(game, "liars_dice", bids=2)
    for i in range(game.num_infosets):
        own, bids = game.infoset_key(i).split("|")
        bids = bids.split()
        row = matrix[game.infoset_first_seq[i]]
        assert [f for f in FACE_NAMES if row[col[f"own{f}"]]] == [own]
        assert [b for b in map(rules.bid_name, range(rules.num_bids)) if row[col[f"made{b}"]]] == bids
        for k, bid in enumerate(bids[::-1][:2]):
            assert row[col[f"last{k}.quantity"]] * 2 == int(bid[0])
            assert row[col[f"last{k}.face{bid[-1]}"]] == 1.0
        assert row[col[f"player{len(bids) % 2}"]] == 1.0
        for a, action in enumerate(game.actions_of(i)):
            seq = matrix[game.infoset_first_seq[i] + a]
            assert seq[col["call"]] == (action == "bluff")
            if action != "bluff":
                assert seq[col["bid_quantity"]] * 2 == int(action[0]) and seq[col[f"bid_face{action[-1]}"]] == 1.0


def test_liars_dice_bid_holds_is_the_chance_of_the_claim():
    """`bid_holds` against enumeration of the opponent's rolls, on Bluff(2, 1) states built by hand
    (the game itself is too large to compile in a test)."""
    from itertools import combinations_with_replacement

    from rcfr.features.liars_dice import _encode
    from rcfr.games.dice import Bluff, _multiset_probability

    rules = Bluff(2, 1)
    encoder = make_encoder(type("G", (), {"rules": rules})(), "liars_dice")
    col = {n: i for i, n in enumerate(encoder.names)}
    rolls = [list(combinations_with_replacement(range(6), d)) for d in (2, 1)]
    rng = np.random.default_rng(0)
    for _ in range(200):
        last = int(rng.integers(-1, rules.num_bids - 1))  # the last bid (-1: none yet, player 0 to bid)
        p = 0 if last < 0 else int(rng.integers(2)) if last > 0 else 1
        mask = 0 if last < 0 else (1 << last) | (1 if p == 0 else 0)  # player 0 after two bids, 1 after one
        state = np.array([2, 0, 0, last, mask, 0 if last < 0 else 2 - p, 0], np.int64)
        mine = int(rng.integers(len(rolls[p])))
        state[1 + p] = mine
        action = int(rng.integers(rules.num_bids - (last + 1)))  # a bid, not the call
        out = np.zeros(encoder.num_features)
        _encode(encoder.data, state, action, out)
        bid = last + 1 + action
        quantity, face = divmod(bid, 6)
        star = 5

        def count(roll):
            return sum(d == face or d == star for d in roll)
        expected = sum(_multiset_probability(r, 6) for r in rolls[1 - p]
                       if count(rolls[p][mine]) + count(r) >= quantity + 1)
        assert out[col["bid_holds"]] == pytest.approx(expected)


def test_latent_ttt_rows_read_back_what_the_mover_knows():
    """Key ``X:moves but the pending one``: the revealed board, the known moves in order and the
    squares that may hold the pending move come back."""
    game = rcfr.load_game("latent_ttt", opening=(4, 0, 8))
    rules = game.rules
    matrix, col = _rows_by_name(game, "latent_ttt")
    longest = 2 * 6
    decisions = np.flatnonzero(game.player >= 0)
    states = game.states(decisions)
    pending = {}
    for h in decisions.tolist():
        if states[h].moves:
            pending.setdefault(int(game.infoset[h]), set()).add(states[h].moves[-1])
    for i in range(game.num_infosets):
        state = states[int(game.infoset_history[i])]
        p = rules.player(state)
        row = matrix[game.infoset_first_seq[i]]
        own = [q for q in range(9) if state.board[q] == p + 1]
        assert [q for q in range(9) if row[col[f"own{q}"]]] == own
        assert [q for q in range(9) if row[col[f"opponent{q}"]]] == [q for q in range(9) if state.board[q] == 2 - p]
        known = state.moves[:-1]
        timed = sorted((row[col[f"{'own' if (rules._first + j) % 2 == p else 'opponent'}_time{q}"]], q)
                       for j, q in enumerate(known))
        assert [q for _, q in timed] == list(known)
        assert [round(t * longest) for t, _ in timed] == list(range(1, len(known) + 1))
        flagged = {q for q in range(9) if row[col[f"pending{q}"]]}
        assert flagged == pending.get(i, set())  # exactly the squares the set's histories have it on
        for a, action in enumerate(game.actions_of(i)):
            assert matrix[game.infoset_first_seq[i] + a, col[f"move={action}"]] == 1.0


def test_pam_rows_read_back_the_path():
    game = rcfr.load_game("pam", horizon=2)
    matrix, col = _rows_by_name(game, "pam")
    for i in range(game.num_infosets):
        who, path = game.infoset_key(i).split(":")
        path = [int(n) for n in path.split()]
        row = matrix[game.infoset_first_seq[i]]
        assert row[col[f"player{'MP'.index(who)}"]] == 1.0 and row[col[f"at{path[-1]}"]] == 1.0
        assert [[n for n in range(9) if row[col[f"path{k}={n}"]]] for k in range(len(path))] == [[n] for n in path]
        assert not any(row[col[f"path{k}={n}"]] for k in range(len(path), 3) for n in range(9))
        for a, action in enumerate(game.actions_of(i)):
            seq = matrix[game.infoset_first_seq[i] + a]
            assert seq[col[f"to{action}"]] == 1.0 and seq[col["stay"]] == (int(action) == path[-1])
            assert seq[col["to_visited"]] == (int(action) in path)
