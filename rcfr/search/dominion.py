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
int64 arrays of the same layout (`rcfr.search.dominion_compiled`: `step`, `policy`, `k_rich_probability`,
`rollout`), which
`DominionSolitaire`, the game the searches use, runs both in the tree and in rollouts;
`tests/test_search_dominion.py` requires the two to agree move for move on the same seeds and
uniforms.
"""

from __future__ import annotations

import functools

import numpy as np

from ..options import check_int
from .base import SearchGame

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
    """P[k cards drawn without replacement from `pile` (counts) hold >= need money], drawing one card at a
    time: the readable statement that `dominion_compiled`'s closed form (a sum of products of binomials) is
    tested against."""
    copper, silver, gold = pile[COPPER], pile[SILVER], pile[GOLD]
    return _draw_rich(copper, silver, gold, sum(pile) - copper - silver - gold, k, need)


@functools.lru_cache(maxsize=None)
def _draw_rich(copper, silver, gold, rest, k, need):
    if need <= 0:
        return 1.0
    n = copper + silver + gold + rest
    if k == 0 or n == 0:
        return 0.0
    total = 0.0
    for count, value, left in ((copper, 1, (copper - 1, silver, gold, rest)), (silver, 2, (copper, silver - 1, gold, rest)),
                               (gold, 3, (copper, silver, gold - 1, rest)), (rest, 0, (copper, silver, gold, rest - 1))):
        if count:
            total += count / n * _draw_rich(*left, k - 1, need - value)
    return total


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
