"""Solitaire Dominion compiled (numba): its rules as kernels on int64 arrays laid out as the tuples of
`rcfr.search.dominion` (`step`, `legal`, `policy`, `k_rich_probability`, `rollout`), and `DominionSolitaire`,
the game the searches use, which runs them in the tree and in rollouts. `tests/test_search_dominion.py`
requires them to agree with the readable rules (`DominionRules`, the reference) move for move."""

from __future__ import annotations

import numpy as np
from numba import njit

from .base import draw_chance
from .dominion import (
    ACTION,
    ACTIONS,
    BUY,
    BUY_PHASE,
    BUYS,
    COINS,
    COPPER,
    COST,
    DECK,
    DISCARD,
    END,
    GARDENS,
    GOLD,
    HAND,
    IS_ACTION,
    LEFT,
    LENDER_COINS,
    MONEY,
    MONEYLENDER,
    PHASE,
    PILES,
    PLAY,
    PLUS_ACTIONS,
    PLUS_BUYS,
    PLUS_CARDS,
    PLUS_COINS,
    POINTS,
    PROVINCE,
    RICH,
    SEED_SPACE,
    SILVER,
    DominionRules,
    K,
)


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
    rest = k
    for pile in (deck, discard):  # the draw pile, then the reshuffled discard pile
        n = 0
        for c in range(K):
            n += pile[c]
        if n >= rest:
            return _k_hyper_rich(pile, rest, RICH - money), k
        for c in range(K):
            money += MONEY[c] * pile[c]
        rest -= n
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
