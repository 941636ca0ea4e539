"""Solitaire Dominion: the rules on hand-worked positions (draw and reshuffle bookkeeping, each
card's effect, buying, end conditions, scoring), the compiled kernels against the readable rules
move for move on the same seeds and uniforms, the control variate's expectation against brute
force and its zero mean (with a negative control), and the searches that use it."""

import itertools

import numpy as np
import pytest

from rcfr.search import MCTS, DominionSolitaire, load_search_game
from rcfr.search import dominion as D
from rcfr.search import dominion_compiled as compiled
from rcfr.search.dominion import (
    ACTION,
    BUY,
    BUY_PHASE,
    CARDS,
    COPPER,
    COUNCIL_ROOM,
    DUCHY,
    END,
    ESTATE,
    FESTIVAL,
    GARDENS,
    GOLD,
    LABORATORY,
    MARKET,
    MOAT,
    MONEYLENDER,
    PROVINCE,
    SILVER,
    SMITHY,
    SUPPLY,
    VILLAGE,
    WOODCUTTER,
    DominionRules,
    K,
    Stream,
)

G = DominionRules(turns=16)             # the readable rules
C = DominionSolitaire(turns=16)         # the same game on the kernels


def make(left=5, phase=ACTION, actions=1, buys=1, coins=0, deck=None, hand=None, discard=None, play=None,
         piles=None):
    """A state from {card: count} dicts (the action phase skipped if nothing can be played)."""
    def counts(d):
        out = [0] * K
        for c, n in (d or {}).items():
            out[c] = n
        return out
    p = SUPPLY.tolist() if piles is None else counts(piles)
    return G._skip_actions((left, phase, actions, buys, coins, *counts(deck), *counts(hand), *counts(discard),
                            *counts(play), *p))


def part(state, field):
    return {CARDS[c]: n for c, n in enumerate(state[field:field + K]) if n}


class Replay:
    """A generator stand-in replaying given uniforms, as the compiled rollout reads them."""

    def __init__(self, u):
        self.u, self.i = u, 0

    def random(self):
        self.i += 1
        return float(self.u[self.i - 1])

    def integers(self, n):
        return int(self.random() * n)


def positions(n, seed, game=G):
    """States reached by the default policy from random starts."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        s = game.initial(rng)
        for _ in range(int(rng.integers(0, 40))):
            nxt = game.step(s, game.default_policy(s, rng), rng)
            if game.is_terminal(nxt):
                break
            s = nxt
        out.append(s)
    return out


# -- the rules on hand-worked positions --------------------------------------------------------------

def test_stream_matches_kernel_and_is_uniform():
    x = np.uint64(12345)
    s = Stream(12345)
    for _ in range(50):
        x, u = compiled._uniform(np.uint64(x))
        assert s.uniform() == u
    us = [Stream(seed).uniform() for seed in range(4000)]
    assert 0.45 < np.mean(us) < 0.55 and min(us) >= 0 and max(us) < 1


def test_start_of_the_game():
    s = G.initial(np.random.default_rng(3))
    assert s[:5] == (16, BUY_PHASE, 1, 1, 0)          # no action card: straight to buying
    hand, deck = part(s, D.HAND), part(s, D.DECK)
    assert sum(hand.values()) == 5 and sum(deck.values()) == 5
    assert hand.get("Copper", 0) + deck.get("Copper", 0) == 7 and hand.get("Estate", 0) + deck.get("Estate", 0) == 3
    assert G.utility(s) == 3.0 and G.money(s) == hand.get("Copper", 0)
    assert G.initial() == G.initial() and G.initial(np.random.default_rng(0)) is not None
    # every first hand has 2-5 Coppers, with the hypergeometric frequencies (7 Coppers of 10, 5 drawn)
    rng = np.random.default_rng(0)
    coppers = np.bincount([G.initial(rng)[D.HAND + COPPER] for _ in range(3000)], minlength=6)
    exact = np.array([0, 0, 21, 105, 105, 21]) / 252 * 3000
    assert coppers[:2].sum() == 0 and np.all(np.abs(coppers - exact) < 5 * np.sqrt(exact + 1))


def test_buying_then_cleanup_reshuffles_the_discard_pile():
    # 2 Golds left in the draw pile; the hand (3 Coppers) and the bought Silver join 2 Estates in the
    # discard pile, which is reshuffled for the 3 cards still to draw
    s = make(phase=BUY_PHASE, deck={GOLD: 2}, hand={COPPER: 3}, discard={ESTATE: 2})
    assert s[1] == BUY_PHASE and G.money(s) == 3
    assert G.actions(s) == tuple(BUY + c for c in (SILVER, VILLAGE, WOODCUTTER, ESTATE, MOAT, COPPER)) + (END,)
    for seed in range(20):
        t = G.apply(s, BUY + SILVER, seed)
        assert t[:5] == (4, BUY_PHASE, 1, 1, 0)
        hand, deck = part(t, D.HAND), part(t, D.DECK)
        assert hand["Gold"] == 2 and sum(hand.values()) == 5 and sum(deck.values()) == 3
        assert not part(t, D.DISCARD) and not part(t, D.PLAY)
        assert {k: hand.get(k, 0) + deck.get(k, 0) for k in ("Copper", "Silver", "Estate")} == \
            {"Copper": 3, "Silver": 1, "Estate": 2}
        assert t[D.PILES + SILVER] == SUPPLY[SILVER] - 1
    with pytest.raises(ValueError, match="cannot buy"):
        G.apply(s, BUY + GOLD, 0)                       # 3 money
    # a short deck: everything left is drawn and nothing more
    t = G.apply(make(phase=BUY_PHASE, deck={GOLD: 1}, hand={COPPER: 2}), END, 7)
    assert part(t, D.HAND) == {"Gold": 1, "Copper": 2} and not part(t, D.DECK) and not part(t, D.DISCARD)


@pytest.mark.parametrize("card, cards, actions, buys, coins", [
    (MOAT, 2, 0, 1, 0), (VILLAGE, 1, 2, 1, 0), (WOODCUTTER, 0, 0, 2, 2), (SMITHY, 3, 0, 1, 0),
    (COUNCIL_ROOM, 4, 0, 2, 0), (FESTIVAL, 0, 2, 2, 2), (LABORATORY, 2, 1, 1, 0), (MARKET, 1, 1, 2, 1)])
def test_each_action_card(card, cards, actions, buys, coins):
    # a draw pile of Silvers makes every draw known; an Estate in hand keeps the hand non-empty
    s = make(deck={SILVER: 10}, hand={card: 1, ESTATE: 1, VILLAGE: 1} if card != VILLAGE else {card: 2, ESTATE: 1})
    assert s[1] == ACTION and card in G.actions(s) and G.actions(s)[-1] == END
    t = G.apply(s, card, 99)
    assert t[D.PLAY + card] == 1 and t[D.HAND + SILVER] == cards and t[D.DECK + SILVER] == 10 - cards
    assert (t[D.ACTIONS], t[D.BUYS], t[D.COINS]) == (actions, buys, coins)
    assert t[1] == (ACTION if actions else BUY_PHASE)   # the other Village stays playable with an action left
    assert G.money(t) == coins + 2 * cards


def test_moneylender_gardens_and_the_action_phase():
    s = make(hand={MONEYLENDER: 1, COPPER: 2, ESTATE: 2})
    t = G.apply(s, MONEYLENDER, 0)
    assert t[D.HAND + COPPER] == 1 and t[D.COINS] == 3 and G.money(t) == 4 and t[1] == BUY_PHASE
    assert sum(t[D.HAND:D.PILES]) == sum(s[D.HAND:D.PILES]) - 1           # the Copper is trashed
    t = G.apply(make(hand={MONEYLENDER: 1, ESTATE: 4}), MONEYLENDER, 0)
    assert t[D.COINS] == 0 and G.money(t) == 0                               # no Copper, no coins
    # ending the action phase by choice keeps the action cards in hand
    t = G.apply(make(hand={SMITHY: 1, COPPER: 4}), END, 0)
    assert t[1] == BUY_PHASE and t[D.HAND + SMITHY] == 1 and G.money(t) == 4
    with pytest.raises(ValueError, match="cannot play"):
        G.apply(make(hand={SMITHY: 1, COPPER: 4}), VILLAGE, 0)
    # Gardens: 1 point per 10 cards owned (29 cards: 2 points each)
    s = make(deck={GARDENS: 2, COPPER: 20}, hand={ESTATE: 3, DUCHY: 1, PROVINCE: 1, COPPER: 2})
    assert G.utility(s) == 2 * 2 + 3 + 3 + 6 and compiled.score(np.array(s, dtype=np.int64)) == G.utility(s)


def test_two_buys_and_the_end_of_the_game():
    s = make(phase=BUY_PHASE, buys=2, hand={GOLD: 3, COPPER: 1})         # 10 money, two buys
    t = G.apply(s, BUY + PROVINCE, 0)
    assert t[:5] == (5, BUY_PHASE, 1, 1, -8) and G.money(t) == 2 and t[D.DISCARD + PROVINCE] == 1
    assert G.actions(t) == (BUY + ESTATE, BUY + MOAT, BUY + COPPER, END)
    u = G.apply(t, BUY + ESTATE, 0)                                       # the second buy ends the turn
    assert u[0] == 4 and G.utility(u) == 7 and sum(u[D.HAND:D.HAND + K]) == 5      # 6 cards owned, 5 drawn
    assert sum(u[D.DECK:D.DECK + K]) == 1 and not part(u, D.DISCARD)
    # the last turn, the last Province, or a third empty pile ends the game at once, with no draw
    assert G.apply(make(left=1, phase=BUY_PHASE, deck={COPPER: 5}), END, 0)[0] == 0
    piles = dict(enumerate(SUPPLY.tolist()))
    last = make(phase=BUY_PHASE, deck={COPPER: 5}, hand={GOLD: 3}, piles={**piles, PROVINCE: 1})
    over = G.apply(last, BUY + PROVINCE, 0)
    assert G.is_terminal(over) and G.utility(over) == 6 and not part(over, D.HAND)
    assert G.draws(last, BUY + PROVINCE) == 0
    two_empty = make(phase=BUY_PHASE, deck={COPPER: 5}, hand={SILVER: 2}, piles={**piles, MOAT: 0, VILLAGE: 0})
    assert G.is_terminal(G.apply(two_empty, BUY + SMITHY, 0)) is False
    assert G.is_terminal(G.apply(make(phase=BUY_PHASE, deck={COPPER: 5}, hand={SILVER: 2},
                                      piles={**piles, MOAT: 0, VILLAGE: 0, SMITHY: 1}), BUY + SMITHY, 0))
    with pytest.raises(ValueError, match="turns"):
        DominionSolitaire(turns=0)
    assert load_search_game("dominion_solitaire", turns=3).turns == 3


# -- compiled against readable ------------------------------------------------------------------------

def test_kernels_match_the_readable_rules_move_for_move():
    rng = np.random.default_rng(5)
    moves = 0
    for s in positions(60, seed=1):
        while not G.is_terminal(s):
            u = rng.random()
            a = G.default_policy(s, Replay([u]))
            arr = np.array(s, dtype=np.int64)
            assert compiled.policy(arr, u) == a and a in G.actions(s)
            for b in G.actions(s):                     # every legal action, not only the policy's
                raw = int(rng.integers(D.SEED_SPACE))
                t, t0 = np.array(s, dtype=np.int64), np.array(s, dtype=np.int64)
                p, k = compiled.k_rich_probability(t, b)
                control = G.control(s, b, raw)
                compiled.step(t, b, raw)
                assert tuple(t.tolist()) == G.apply(s, b, raw) == C.apply(s, b, raw) and k == G.draws(s, b)
                assert C.control(s, b, raw) == pytest.approx(control, abs=1e-12) and compiled.legal(t0, b)
                assert control == pytest.approx((G.money(G.apply(s, b, raw)) >= 8) - p if k else 0.0, abs=1e-12)
                moves += 1
            illegal = [b for b in range(D.END + 1) if b not in G.actions(s)]
            assert not any(compiled.legal(np.array(s, dtype=np.int64), b) for b in illegal)
            s = G.apply(s, a, int(rng.integers(D.SEED_SPACE)))
    assert moves > 1000
    with pytest.raises(ValueError, match="cannot play or buy"):
        C.apply(C.initial(), BUY + PROVINCE, 0)


@pytest.mark.parametrize("mode", ["fresh", "batch"])
def test_compiled_rollout_matches_python_rollout(mode):
    rng = np.random.default_rng(11)
    game, readable = DominionSolitaire(turns=6), DominionRules(turns=6)
    for k, s in enumerate(positions(40, seed=2, game=game)):
        assert MCTS(game, simulations=1, leaf="rollout").compiled
        m = MCTS(readable, simulations=1, leaf="rollout", control_variates=True, seed=k)
        assert not m.compiled
        u = rng.random(2000)
        batch = m.new_batch() if mode == "batch" else None
        draws = batch.view(2000) if batch is not None else None
        value, tail, _, upos, steps = game.rollout(s, draws, 0, False, u, 0, True)
        replay = Replay(u)
        py_value, py_tail, py_steps = m.python_rollout(s, batch, 0, replay)
        assert (value, steps, upos) == (py_value, py_steps, replay.i)
        assert tail == pytest.approx(py_tail, abs=1e-9)
        if mode == "fresh" and upos:
            assert game.rollout(s, draws, 0, False, u[:upos - 1], 0, True)[4] == -1


# -- the control variate ----------------------------------------------------------------------------

def brute_rich(deck, discard, k, money):
    """P[>= 8 money] by enumerating every order of the draw pile and of the reshuffled discard pile."""
    cards = [c for c in range(K) for _ in range(deck[c])]
    rest = [c for c in range(K) for _ in range(discard[c])]
    hits = total = 0
    for order in itertools.permutations(cards):
        for order2 in itertools.permutations(rest) if len(cards) < k else [()]:
            drawn = (list(order) + list(order2))[:k]
            hits += money + sum(int(D.MONEY[c]) for c in drawn) >= 8
            total += 1
    return hits / total


@pytest.mark.parametrize("deck, discard, k, money", [
    ({GOLD: 2, COPPER: 3, ESTATE: 2}, {}, 5, 0), ({SILVER: 2, COPPER: 1}, {GOLD: 1, ESTATE: 3, COPPER: 1}, 5, 0),
    ({GOLD: 1, ESTATE: 1}, {SILVER: 2, COPPER: 2, ESTATE: 1}, 4, 2), ({COPPER: 2}, {GOLD: 1}, 5, 3),
    ({SILVER: 3, ESTATE: 4}, {}, 3, 4)])
def test_rich_probability_equals_brute_force(deck, discard, k, money):
    dk, dc = [deck.get(c, 0) for c in range(K)], [discard.get(c, 0) for c in range(K)]
    exact = brute_rich(dk, dc, k, money)
    assert D.rich_probability(dk, dc, k, money) == pytest.approx(exact, abs=1e-12)
    s = make(phase=BUY_PHASE, coins=0, deck=deck, discard=discard)
    if k == 5 and money == 0:                          # the cleanup draw of an empty hand
        assert compiled.k_rich_probability(np.array(s, dtype=np.int64), END)[0] == pytest.approx(exact, abs=1e-12)


class WrongRich(DominionSolitaire):
    """Negative control: the expectation ignores the reshuffle (draws only from the draw pile)."""

    def control(self, state, action, outcome):
        k = self.draws(state, action)
        if k == 0 or state[1] == ACTION:
            return super().control(state, action, outcome)
        deck = list(state[D.DECK:D.DECK + K])
        p = D.rich_probability(deck, [0] * K, min(k, sum(deck)), 0)
        return float(self.money(self.apply(state, action, outcome)) >= 8) - p


def test_control_variate_has_zero_mean_and_the_negative_control_does_not():
    # a buy-phase state two cards from a reshuffle, with Golds to find: the event is common
    s = make(phase=BUY_PHASE, deck={GOLD: 1, COPPER: 2}, hand={SILVER: 2, ESTATE: 3},
             discard={GOLD: 2, COPPER: 3, ESTATE: 2})
    rng = np.random.default_rng(0)
    ys = np.array([G.control(s, END, int(rng.integers(D.SEED_SPACE))) for _ in range(6000)])
    assert abs(ys.mean()) < 4 * ys.std(ddof=1) / np.sqrt(len(ys))
    wrong = WrongRich()
    ys = np.array([wrong.control(s, END, int(rng.integers(D.SEED_SPACE))) for _ in range(2000)])
    assert abs(ys.mean()) > 6 * ys.std(ddof=1) / np.sqrt(len(ys))
    # along whole rollouts (compiled), from the start: the summed terms have mean zero too
    m = MCTS(DominionSolitaire(turns=8), simulations=1, leaf="rollout", control_variates=True, seed=1)
    start = m.game.initial()
    tails = np.array([m.sample_return(start, END)[1] for _ in range(4000)])
    assert abs(tails.mean()) < 4 * tails.std(ddof=1) / np.sqrt(len(tails)) and tails.std() > 0.1


# -- the searches -------------------------------------------------------------------------------------

def test_recursive_common_random_numbers_share_each_nodes_draws():
    # at a buy-phase node with 5+ cards in the draw pile, every action's first visit draws the same
    # hand (batch key (0,)), and so do the first visits below them (key (0, 0)) where the piles agree
    s = make(phase=BUY_PHASE, deck={GOLD: 3, COPPER: 4, ESTATE: 3, SILVER: 2}, hand={SILVER: 2, COPPER: 2})
    hands = {}
    for crn in (True, False):
        m = MCTS(G, c=100.0, simulations=60, leaf="rollout", common_random_numbers=crn, seed=3)
        root = m.run(s)
        assert bool(m._keyed) == crn and (not crn or (0,) in m._keyed)
        firsts = [next(iter(root.children[i])) for i in range(len(root.actions)) if root.children[i]]
        hands[crn] = {t[D.HAND:D.HAND + K] for t in firsts}
        assert len(firsts) == len(root.actions)
    assert len(hands[True]) == 1 and len(hands[False]) > 1


@pytest.mark.parametrize("options", [{}, {"control_variates": True}, {"common_random_numbers": True},
                                     {"control_variates": True, "common_random_numbers": True}])
def test_uct_plays_a_short_game_with_each_method(options):
    game = DominionSolitaire(turns=4)
    rng = np.random.default_rng(0)
    s = game.initial(rng)
    m = MCTS(game, c=100.0, simulations=16, leaf="rollout", recommend="mean", seed=0, **options)
    while not game.is_terminal(s):
        a, value, n = m.decide(s)
        assert a in game.actions(s) and n == 16 and np.isfinite(value)
        s = game.step(s, a, rng)
    assert game.utility(s) >= 3
    with pytest.raises(ValueError, match="antithetic"):
        MCTS(game, simulations=4, antithetic=True)


class FrozenLuck(MCTS):
    """Negative control: every shared batch holds the same seeds (the same shuffles every search)."""

    def new_batch(self):
        batch = super().new_batch()
        batch.raw = np.arange(4096, dtype=np.int64)
        return batch


def test_recursive_crn_returns_are_unbiased_and_the_negative_control_is_not():
    # two simulations from a first-turn buy: each of the first two actions gets one return, drawn
    # through the batch keyed (0,) and the rollout after it; its mean over searches must equal the
    # plain rollout value of that action (estimated independently)
    game = DominionSolitaire(turns=3)
    s = next(t for t in (game.initial(np.random.default_rng(k)) for k in range(50)) if game.money(t) >= 4)
    a = game.actions(s)[0]
    plain = MCTS(game, simulations=1, leaf="rollout", seed=99)
    reference = np.array([plain.sample_return(s, a)[0] for _ in range(6000)])

    def z(cls, n):
        x = np.array([cls(game, c=100.0, simulations=2, leaf="rollout", common_random_numbers=True, seed=r)
                      .action_values(s)[1][0] for r in range(n)])
        se = np.sqrt(x.var(ddof=1) / len(x) + reference.var(ddof=1) / len(reference))
        return (x.mean() - reference.mean()) / se, x.var()

    good, var = z(MCTS, 3000)
    assert abs(good) < 4 and var > 0.1
    frozen, _ = z(FrozenLuck, 600)          # the same shuffles in every search: a biased mean
    assert abs(frozen) > 6


def test_uct_buys_a_province_late_with_eight_money():
    s = make(left=3, phase=BUY_PHASE, hand={GOLD: 2, SILVER: 1}, deck={COPPER: 7, ESTATE: 3, SILVER: 2},
             discard={SMITHY: 1, GOLD: 1})
    assert G.money(s) == 8 and G.actions(s)[0] == BUY + PROVINCE
    for options in ({}, {"control_variates": True, "common_random_numbers": True}):
        m = MCTS(C, c=100.0, simulations=400, leaf="rollout", recommend="mean", seed=0, **options)
        assert m.decide(s)[0] == BUY + PROVINCE
