"""Solitaire Dominion (thesis §3.2.4 and ch. 7): build a deck for a fixed number of turns, score
its victory points.

One player starts with 7 Coppers and 3 Estates, draws 5-card hands, and each turn may play one
action card (more if cards give +actions), then buy one card (more with +buys) from the supply;
bought cards go to the discard pile, which is reshuffled into the deck when the deck runs out.
Treasures in hand are always spent in full. The game ends after `turns` turns, or earlier, at the
end of a turn, when the Provinces or any three supply piles are gone (Dominion's own end rule).
The score is the deck's victory points. Choices the thesis leaves open (docs/search.md):

* The kingdom. The thesis does not list its ten kingdom cards, and every recommended set of the
  base game has an attack (Militia, Bureaucrat, Spy, Thief or Witch). We use ten first-edition
  base-set cards that neither attack nor ask for a choice when played: Moat, Village, Woodcutter,
  Gardens, Moneylender, Smithy, Council Room, Festival, Laboratory, Market (Moat's reaction and
  Council Room's gift to other players do nothing alone). The Curse pile is left out (nothing gives
  Curses, and buying one only loses a point).
* Supply sizes are the two-player counts (8 of each victory card, 10 of each kingdom card, 8
  Gardens, 46 Coppers, 40 Silvers, 30 Golds); `turns` defaults to 16.

States are tuples of 85 small integers (`FIELDS`): turns left (0 = over), phase (ACTION or BUY),
actions, buys, coins from cards (less what was spent), then per-card counts of the draw pile, hand,
discard pile, cards in play and supply, in card order (`CARDS`). A state records which cards are
in the draw pile, never their order: drawing is the chance event. Actions: play card c (its
index), buy card c (``BUY + c``) or ``END`` (end the action phase, or the turn). A raw chance
outcome is a 62-bit seed; its splitmix64 stream of uniforms draws each card uniformly from the draw
pile's multiset, reshuffling the discard pile in when the draw pile is empty. Actions that draw
nothing ignore their outcome. The action phase is skipped when no action can be played.

The rules exist twice: readably in Python (`DominionRules`, the reference) and as numba kernels on
int64 arrays of the same layout (`step`, `policy`, `k_rich_probability`, `rollout`), which
`DominionSolitaire`, the game the searches use, runs both in the tree and in rollouts;
`tests/test_search_dominion.py` requires the two to agree move for move on the same seeds and
uniforms.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..options import check_int
from .base import SearchGame, draw_chance

CARDS = ("Copper", "Silver", "Gold", "Estate", "Duchy", "Province", "Moat", "Village", "Woodcutter", "Gardens",
         "Moneylender", "Smithy", "Council Room", "Festival", "Laboratory", "Market")
K = len(CARDS)
(COPPER, SILVER, GOLD, ESTATE, DUCHY, PROVINCE, MOAT, VILLAGE, WOODCUTTER, GARDENS, MONEYLENDER, SMITHY,
 COUNCIL_ROOM, FESTIVAL, LABORATORY, MARKET) = range(K)
COST = np.array([0, 3, 6, 2, 5, 8, 2, 3, 3, 4, 4, 4, 5, 5, 5, 5], dtype=np.int64)
MONEY = np.array([1, 2, 3] + [0] * 13, dtype=np.int64)
POINTS = np.array([0, 0, 0, 1, 3, 6] + [0] * 10, dtype=np.int64)      # Gardens: 1 per 10 cards owned
IS_ACTION = np.array([0] * 6 + [1, 1, 1, 0] + [1] * 6, dtype=np.int64)
PLUS_CARDS = np.array([0] * 6 + [2, 1, 0, 0, 0, 3, 4, 0, 2, 1], dtype=np.int64)
PLUS_ACTIONS = np.array([0] * 6 + [0, 2, 0, 0, 0, 0, 0, 2, 1, 1], dtype=np.int64)
PLUS_BUYS = np.array([0] * 6 + [0, 0, 1, 0, 0, 0, 1, 1, 0, 1], dtype=np.int64)
PLUS_COINS = np.array([0] * 6 + [0, 0, 2, 0, 0, 0, 0, 2, 0, 1], dtype=np.int64)
SUPPLY = np.array([46, 40, 30, 8, 8, 8, 10, 10, 10, 8, 10, 10, 10, 10, 10, 10], dtype=np.int64)
#: Moneylender trashes a Copper from hand for this many coins
LENDER_COINS = 3
#: a hand with this much money buys a Province: the control variate's event (thesis §7.1)
RICH = 8

ACTION, BUY_PHASE = 0, 1
BUY = K                 # action BUY + c buys card c; 0 <= c < K plays card c
END = 2 * K
LEFT, PHASE, ACTIONS, BUYS, COINS = range(5)
DECK, HAND, DISCARD, PLAY, PILES = (5 + K * j for j in range(5))
FIELDS = 5 + 5 * K
SEED_SPACE = 1 << 62
#: the most turns a game may last: a rollout plays every one, and states hold the count in an int64
MAX_TURNS = 10_000
_MASK = (1 << 64) - 1


# -- the readable rules ----------------------------------------------------------------------------
# (on tuples of the tables above: indexing numpy arrays from Python is slow)
_COST = tuple(COST.tolist())
_MONEY = tuple(MONEY.tolist())
_POINTS = tuple(POINTS.tolist())
_IS_ACTION = tuple(IS_ACTION.tolist())
_PLUS_CARDS = tuple(PLUS_CARDS.tolist())
_PLUS_ACTIONS = tuple(PLUS_ACTIONS.tolist())
_PLUS_BUYS = tuple(PLUS_BUYS.tolist())
_PLUS_COINS = tuple(PLUS_COINS.tolist())
#: buys listed dearest first
_BY_COST = tuple(sorted(range(K), key=lambda c: -_COST[c]))


class Stream:
    """splitmix64: the uniforms a raw chance outcome (a seed) stands for."""

    def __init__(self, seed: int):
        self.x = int(seed) & _MASK

    def uniform(self) -> float:
        self.x = (self.x + 0x9E3779B97F4A7C15) & _MASK
        z = self.x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return ((z ^ (z >> 31)) >> 11) * 2.0 ** -53


def _draw(deck, hand, discard, k, stream):
    """Draw k cards into hand, one at a time uniformly from the draw pile's multiset (cards in card
    order, the uniform picking a position), reshuffling the discard pile in when the pile is empty."""
    for _ in range(k):
        if sum(deck) == 0:
            if sum(discard) == 0:
                return
            deck[:] = discard
            discard[:] = [0] * K
        r = int(stream.uniform() * sum(deck))
        for c in range(K):
            if r < deck[c]:
                break
            r -= deck[c]
        deck[c] -= 1
        hand[c] += 1


def _hypergeometric_rich(pile, k, need):
    """P[k cards drawn without replacement from `pile` (counts) hold >= need money]."""
    if need <= 0:
        return 1.0
    n = sum(pile)
    cu, si, go = pile[COPPER], pile[SILVER], pile[GOLD]
    other = n - cu - si - go
    total = 0.0
    for a in range(min(cu, k) + 1):
        for b in range(min(si, k - a) + 1):
            for g in range(min(go, k - a - b) + 1):
                if a + 2 * b + 3 * g >= need:
                    total += math.comb(cu, a) * math.comb(si, b) * math.comb(go, g) * math.comb(other, k - a - b - g)
    return total / math.comb(n, k)


def rich_probability(deck, discard, k, money):
    """P[money + the money of k cards drawn (from the draw pile, then the reshuffled discard pile)
    >= RICH]: the expectation of the control variate's event."""
    n = sum(deck)
    if n >= k:
        return _hypergeometric_rich(deck, k, RICH - money)
    money += sum(_MONEY[c] * deck[c] for c in range(K))
    k -= n
    if sum(discard) >= k:
        return _hypergeometric_rich(discard, k, RICH - money)
    return float(money + sum(_MONEY[c] * discard[c] for c in range(K)) >= RICH)


class DominionRules(SearchGame):
    """One-player Dominion for `turns` turns, every rule in readable Python: the reference that the
    kernels are tested against (`DominionSolitaire` is the same game on the kernels)."""

    num_players = 1
    num_raw_outcomes = SEED_SPACE
    vmin, vmax = 0.0, 200.0      # UCB c = 100 is half this range, as the thesis sets it (§7.4)
    #: offline coefficient of the control variate before an edge has 50 visits (thesis §7.4)
    cv_constant = -0.7
    #: common random numbers share each state's batches across its actions, recursively (§7.2)
    crn_scope = "recursive"

    def __init__(self, turns: int = 16):
        self.turns = check_int("dominion_solitaire turns", turns, 1, MAX_TURNS)
        self.name = f"dominion_solitaire(turns={turns})"  # the same game whichever form of the rules

    # -- protocol ---------------------------------------------------------------------------------
    def initial(self, rng=None):
        """The starting deck shuffled and a first hand drawn (seed from `rng`, else 0)."""
        seed = int(rng.integers(SEED_SPACE)) if rng is not None else 0
        deck = [0] * K
        deck[COPPER], deck[ESTATE] = 7, 3
        hand, discard = [0] * K, [0] * K
        _draw(deck, hand, discard, 5, Stream(seed))
        return self._skip_actions((self.turns, ACTION, 1, 1, 0, *deck, *hand, *discard, *[0] * K,
                                   *SUPPLY.tolist()))

    def check_state(self, state):
        """A tuple of FIELDS integers: turns left in [0, turns], a phase and non-negative counts (the
        kernels would run on a negative count and draw from it)."""
        if not isinstance(state, tuple) or len(state) != FIELDS or not all(
                isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in state):
            raise ValueError(f"a {self.name} state must be a tuple of {FIELDS} integers, got {state!r:.80}")
        bad = [f"{name} {state[i]}" for name, i in (("turns left", LEFT), ("actions", ACTIONS), ("buys", BUYS),
                                                     ("coins", COINS)) if state[i] < 0]
        bad += [f"{where} {CARDS[c]} {state[f + c]}" for where, f in (("deck", DECK), ("hand", HAND),
                ("discard", DISCARD), ("play", PLAY), ("supply", PILES)) for c in range(K) if state[f + c] < 0]
        if state[LEFT] > self.turns:
            bad.append(f"turns left {state[LEFT]} > {self.turns}")
        if state[PHASE] not in (ACTION, BUY_PHASE):
            bad.append(f"phase {state[PHASE]} (allowed: {ACTION} action, {BUY_PHASE} buy)")
        if bad:
            raise ValueError(f"not a {self.name} state: {', '.join(bad)}")

    def is_terminal(self, state):
        return state[LEFT] == 0

    def player(self, state):
        return 0

    def actions(self, state):
        """Playable action cards in hand (then END) in the action phase; affordable cards, dearest
        first (then END), in the buy phase."""
        hand = state[HAND:HAND + K]
        if state[PHASE] == ACTION:
            return tuple(c for c in range(K) if _IS_ACTION[c] and hand[c]) + (END,)
        money = self.money(state)
        piles = state[PILES:PILES + K]
        return tuple(BUY + c for c in _BY_COST
                     if piles[c] and _COST[c] <= money) + (END,)

    def chance(self, state, action):
        raise NotImplementedError("dominion's chance outcomes are too many to enumerate; sample them")

    @staticmethod
    def money(state):
        hand = state[HAND:HAND + K]
        return state[COINS] + sum(int(_MONEY[c]) * hand[c] for c in range(3))

    def draws(self, state, action) -> int:
        """How many cards `action` draws (0 when it ends the game)."""
        if state[PHASE] == ACTION and action < K:
            return int(_PLUS_CARDS[action])
        if action == END and state[PHASE] == ACTION:
            return 0
        ends_turn = action == END or state[BUYS] == 1
        return 5 if ends_turn and not self._game_over(state, action) else 0

    def _game_over(self, state, action):
        """Whether the turn that `action` ends is the last."""
        piles = list(state[PILES:PILES + K])
        if action != END:
            piles[action - BUY] -= 1
        return state[LEFT] == 1 or piles[PROVINCE] == 0 or sum(p == 0 for p in piles) >= 3

    def apply(self, state, action, outcome):
        left, phase, actions, buys, coins = state[:5]
        deck, hand, discard, play, piles = (list(state[f:f + K]) for f in (DECK, HAND, DISCARD, PLAY, PILES))
        stream = Stream(outcome)
        if phase == ACTION and action == END:
            phase = BUY_PHASE
        elif phase == ACTION:
            if not (action < K and _IS_ACTION[action] and hand[action] and actions > 0):
                raise ValueError(f"cannot play {action!r} in this state")
            hand[action] -= 1
            play[action] += 1
            actions += _PLUS_ACTIONS[action] - 1
            buys += _PLUS_BUYS[action]
            coins += _PLUS_COINS[action]
            if action == MONEYLENDER and hand[COPPER]:
                hand[COPPER] -= 1          # trashed
                coins += LENDER_COINS
            _draw(deck, hand, discard, _PLUS_CARDS[action], stream)
        else:
            turn_over = action == END
            if not turn_over:
                c = action - BUY
                if not (0 <= c < K and piles[c] and _COST[c] <= self.money(state)):
                    raise ValueError(f"cannot buy {action!r} in this state")
                piles[c] -= 1
                discard[c] += 1
                coins -= _COST[c]
                buys -= 1
                turn_over = buys == 0
            if turn_over:
                over = self._game_over(state, action)
                discard = [d + h + p for d, h, p in zip(discard, hand, play)]
                hand, play = [0] * K, [0] * K
                left, phase, actions, buys, coins = (0 if over else left - 1), ACTION, 1, 1, 0
                if not over:
                    _draw(deck, hand, discard, 5, stream)
        return self._skip_actions((int(left), phase, int(actions), int(buys), int(coins),
                                   *map(int, deck), *map(int, hand), *map(int, discard), *map(int, play),
                                   *map(int, piles)))

    @staticmethod
    def _skip_actions(state):
        """The action phase ends by itself when no action can be played."""
        if state[LEFT] and state[PHASE] == ACTION and (
                state[ACTIONS] == 0 or not any(_IS_ACTION[c] and state[HAND + c] for c in range(K))):
            return state[:PHASE] + (BUY_PHASE,) + state[PHASE + 1:]
        return state

    def utility(self, state):
        owned = [sum(state[f + c] for f in (DECK, HAND, DISCARD, PLAY)) for c in range(K)]
        return float(sum(int(_POINTS[c]) * owned[c] for c in range(K)) + owned[GARDENS] * (sum(owned) // 10))

    def evaluate(self, state):
        """The points owned so far (a leaf heuristic; chapter 7's searches roll out instead)."""
        return self.utility(state)

    # -- chapter 7 ---------------------------------------------------------------------------------
    def default_policy(self, state, rng):
        """Thesis §7.4's 'simple domain knowledge', one uniform per decision: play an action that
        gives +actions if one is in hand, else one that does something (never Moneylender without a
        Copper, nor a draw with nothing left to draw); buy a card other than Copper with probability
        proportional to 2^cost (dearer cards favoured), ending the turn only when nothing but Copper
        is affordable."""
        u = rng.random()
        hand = state[HAND:HAND + K]
        if state[PHASE] == ACTION:
            cantrips = [c for c in range(K) if _IS_ACTION[c] and hand[c] and _PLUS_ACTIONS[c]]
            if cantrips:
                return cantrips[int(u * len(cantrips))]
            left_to_draw = sum(state[DECK:DECK + K]) + sum(state[DISCARD:DISCARD + K])
            useful = [c for c in range(K) if _IS_ACTION[c] and hand[c]
                      and not (c == MONEYLENDER and not hand[COPPER])
                      and (_PLUS_COINS[c] or _PLUS_BUYS[c] or c == MONEYLENDER or left_to_draw)]
            return useful[int(u * len(useful))] if useful else END
        money = self.money(state)
        piles = state[PILES:PILES + K]
        options = [c for c in range(1, K) if piles[c] and _COST[c] <= money]
        if not options:
            return END
        weights = [2.0 ** int(_COST[c]) for c in options]
        x = u * sum(weights)
        for c, w in zip(options, weights):
            if x < w:
                return BUY + c
            x -= w
        return BUY + options[-1]

    def control(self, state, action, outcome):
        """I[the action drew a hand with >= 8 money to spend] - P[it would] (thesis §7.1 for
        Dominion): zero mean at every (state, action); 0 for actions that draw nothing."""
        k = self.draws(state, action)
        if k == 0:
            return 0.0
        deck, discard = list(state[DECK:DECK + K]), list(state[DISCARD:DISCARD + K])
        if state[PHASE] == ACTION:
            hand = list(state[HAND:HAND + K])
            hand[action] -= 1
            money = state[COINS] + _PLUS_COINS[action] + sum(int(_MONEY[c]) * hand[c] for c in range(3))
        else:       # the turn ends: hand, play and the bought card go to the discard pile first
            money = 0
            discard = [d + h + p for d, h, p in zip(discard, state[HAND:HAND + K], state[PLAY:PLAY + K])]
            if action != END:
                discard[action - BUY] += 1
        p = rich_probability(deck, discard, k, money)
        nxt = self.apply(state, action, outcome)
        return float(self.money(nxt) >= RICH) - p



class DominionSolitaire(DominionRules):
    """Solitaire Dominion with its transitions, control variate and rollouts on the compiled rules
    (the tree search's transitions were 60% of its time in Python)."""

    def apply(self, state, action, outcome):
        s = np.array(state, dtype=np.int64)
        if not legal(s, action):
            raise ValueError(f"cannot play or buy {action!r} in this state; legal: {self.actions(state)}")
        step(s, action, outcome)
        return tuple(s.tolist())

    def control(self, state, action, outcome):
        s = np.array(state, dtype=np.int64)
        p, k = k_rich_probability(s, action)
        if k == 0:
            return 0.0
        step(s, action, outcome)
        return (1.0 if k_money(s) >= RICH else 0.0) - p

    def rollout(self, state, draws, rpos, ranked, u, upos, cv):
        """The default policy to the end, compiled (`rollout`); chance from `draws[rpos:]` or u."""
        use = draws is not None
        return rollout(np.array(state, dtype=np.int64), draws if use else _NO_DRAWS, rpos, use, u, upos, cv)


# -- the compiled rules (numba), on int64 arrays laid out as the tuples ----------------------------

@njit(cache=True)
def _uniform(x):
    """One splitmix64 step: (new state, uniform in [0, 1))."""
    x = np.uint64(x) + np.uint64(0x9E3779B97F4A7C15)
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return x, float(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def _total(s, f):
    t = 0
    for c in range(K):
        t += s[f + c]
    return t


@njit(cache=True)
def _k_draw(s, k, x):
    for _ in range(k):
        n = _total(s, DECK)
        if n == 0:
            if _total(s, DISCARD) == 0:
                return x
            for c in range(K):
                s[DECK + c] = s[DISCARD + c]
                s[DISCARD + c] = 0
            n = _total(s, DECK)
        x, u = _uniform(x)
        r = int(u * n)
        c = 0
        while r >= s[DECK + c]:
            r -= s[DECK + c]
            c += 1
        s[DECK + c] -= 1
        s[HAND + c] += 1
    return x


@njit(cache=True)
def k_money(s):
    return s[COINS] + s[HAND + COPPER] + 2 * s[HAND + SILVER] + 3 * s[HAND + GOLD]


@njit(cache=True)
def _k_game_over(s, bought):
    empty = 0
    for c in range(K):
        if s[PILES + c] - (c == bought) == 0:
            empty += 1
    return s[LEFT] == 1 or s[PILES + PROVINCE] - (bought == PROVINCE) == 0 or empty >= 3


@njit(cache=True)
def k_draws(s, action):
    if s[PHASE] == ACTION:
        return PLUS_CARDS[action] if action < K else 0
    ends_turn = action == END or s[BUYS] == 1
    bought = action - BUY if action != END else -1
    return 5 if ends_turn and not _k_game_over(s, bought) else 0


@njit(cache=True)
def legal(s, action):
    """Whether `action` is legal in state s (the readable `actions` lists them)."""
    if s[LEFT] == 0:
        return False
    if action == END:
        return True
    if s[PHASE] == ACTION:
        return 0 <= action < K and IS_ACTION[action] == 1 and s[HAND + action] > 0
    c = action - BUY
    return 0 <= c < K and s[PILES + c] > 0 and COST[c] <= k_money(s)


@njit(cache=True)
def step(s, action, raw):
    """One transition in place (legality is the caller's: `legal` lists the actions)."""
    x = np.uint64(raw)
    if s[PHASE] == ACTION:
        if action == END:
            s[PHASE] = BUY_PHASE
        else:
            s[HAND + action] -= 1
            s[PLAY + action] += 1
            s[ACTIONS] += PLUS_ACTIONS[action] - 1
            s[BUYS] += PLUS_BUYS[action]
            s[COINS] += PLUS_COINS[action]
            if action == MONEYLENDER and s[HAND + COPPER] > 0:
                s[HAND + COPPER] -= 1
                s[COINS] += LENDER_COINS
            _k_draw(s, PLUS_CARDS[action], x)
    else:
        turn_over = action == END
        bought = -1
        if not turn_over:
            bought = action - BUY
            turn_over = s[BUYS] == 1
        over = turn_over and _k_game_over(s, bought)
        if bought >= 0:
            s[PILES + bought] -= 1
            s[DISCARD + bought] += 1
            s[COINS] -= COST[bought]
            s[BUYS] -= 1
        if turn_over:
            for c in range(K):
                s[DISCARD + c] += s[HAND + c] + s[PLAY + c]
                s[HAND + c] = 0
                s[PLAY + c] = 0
            s[LEFT] = 0 if over else s[LEFT] - 1
            s[PHASE], s[ACTIONS], s[BUYS], s[COINS] = ACTION, 1, 1, 0
            if not over:
                _k_draw(s, 5, x)
    if s[LEFT] > 0 and s[PHASE] == ACTION:
        playable = False
        for c in range(K):
            if IS_ACTION[c] and s[HAND + c] > 0:
                playable = True
        if s[ACTIONS] == 0 or not playable:
            s[PHASE] = BUY_PHASE


@njit(cache=True)
def score(s):
    owned = 0
    points = 0
    for c in range(K):
        n = s[DECK + c] + s[HAND + c] + s[DISCARD + c] + s[PLAY + c]
        owned += n
        points += POINTS[c] * n
    gardens = s[DECK + GARDENS] + s[HAND + GARDENS] + s[DISCARD + GARDENS] + s[PLAY + GARDENS]
    return float(points + gardens * (owned // 10))


@njit(cache=True)
def _comb(n, k):
    if k < 0 or k > n:
        return 0.0
    r = 1.0
    for i in range(k):
        r = r * (n - i) / (i + 1)
    return r


@njit(cache=True)
def _k_hyper_rich(pile, k, need):
    if need <= 0:
        return 1.0
    n = 0
    for c in range(K):
        n += pile[c]
    cu, si, go = pile[COPPER], pile[SILVER], pile[GOLD]
    other = n - cu - si - go
    total = 0.0
    for a in range(min(cu, k) + 1):
        for b in range(min(si, k - a) + 1):
            for g in range(min(go, k - a - b) + 1):
                if a + 2 * b + 3 * g >= need:
                    total += _comb(cu, a) * _comb(si, b) * _comb(go, g) * _comb(other, k - a - b - g)
    return total / _comb(n, k)


@njit(cache=True)
def k_rich_probability(s, action):
    """P[the action draws a hand with >= RICH money], and the number of cards it draws."""
    k = k_draws(s, action)
    if k == 0:
        return 0.0, 0
    deck = s[DECK:DECK + K].copy()
    discard = s[DISCARD:DISCARD + K].copy()
    if s[PHASE] == ACTION:
        money = k_money(s) + PLUS_COINS[action] - MONEY[action]
    else:
        money = 0
        for c in range(K):
            discard[c] += s[HAND + c] + s[PLAY + c]
        if action != END:
            discard[action - BUY] += 1
    n = 0
    for c in range(K):
        n += deck[c]
    if n >= k:
        return _k_hyper_rich(deck, k, RICH - money), k
    for c in range(K):
        money += MONEY[c] * deck[c]
    rest = k - n
    m = 0
    for c in range(K):
        m += discard[c]
    if m >= rest:
        return _k_hyper_rich(discard, rest, RICH - money), k
    for c in range(K):
        money += MONEY[c] * discard[c]
    return 1.0 if money >= RICH else 0.0, k


@njit(cache=True)
def policy(s, u):
    """The default policy (`DominionSolitaire.default_policy`) on one uniform."""
    if s[PHASE] == ACTION:
        n = 0
        for c in range(K):
            if IS_ACTION[c] and s[HAND + c] > 0 and PLUS_ACTIONS[c] > 0:
                n += 1
        if n > 0:
            j = int(u * n)
            for c in range(K):
                if IS_ACTION[c] and s[HAND + c] > 0 and PLUS_ACTIONS[c] > 0:
                    if j == 0:
                        return c
                    j -= 1
        left_to_draw = _total(s, DECK) + _total(s, DISCARD)
        useful = np.zeros(K, dtype=np.bool_)
        n = 0
        for c in range(K):
            if IS_ACTION[c] and s[HAND + c] > 0 and not (c == MONEYLENDER and s[HAND + COPPER] == 0) and (
                    PLUS_COINS[c] > 0 or PLUS_BUYS[c] > 0 or c == MONEYLENDER or left_to_draw > 0):
                useful[c] = True
                n += 1
        if n == 0:
            return END
        j = int(u * n)
        for c in range(K):
            if useful[c]:
                if j == 0:
                    return c
                j -= 1
    money = k_money(s)
    total = 0.0
    for c in range(1, K):
        if s[PILES + c] > 0 and COST[c] <= money:
            total += 2.0 ** COST[c]
    if total == 0.0:
        return END
    x = u * total
    last = END
    for c in range(1, K):
        if s[PILES + c] > 0 and COST[c] <= money:
            w = 2.0 ** COST[c]
            if x < w:
                return BUY + c
            x -= w
            last = BUY + c
    return last


@njit(cache=True)
def rollout(s, draws, rpos, use_draws, u, upos, cv):
    """The default policy to the end from state s (not modified): the policy's uniforms from u[upos:],
    one chance outcome per action from draws[rpos:] when `use_draws`, else floor(2^62 u). Returns
    (score, summed control terms, rpos, upos, actions taken), actions -1 when u or draws ran out."""
    s = s.copy()
    tail, steps = 0.0, 0
    while s[LEFT] > 0:
        steps += 1
        if upos >= len(u):
            return 0.0, 0.0, rpos, upos, -1
        action = policy(s, u[upos])
        upos += 1
        raw, rpos, upos = draw_chance(draws, rpos, use_draws, u, upos, SEED_SPACE)
        if raw < 0:
            return 0.0, 0.0, rpos, upos, -1
        if cv:
            p, k = k_rich_probability(s, action)
            step(s, action, raw)
            if k > 0:
                tail += (1.0 if k_money(s) >= RICH else 0.0) - p
        else:
            step(s, action, raw)
    return score(s), tail, rpos, upos, steps


_NO_DRAWS = np.zeros(1, dtype=np.int64)
