"""Bluff (Liar's Dice) features: what a bidder knows, as an on-demand encoder (`rcfr.features.encoders`).

Columns (values in [0, 1]): the acting player (one-hot) and the bids made so far; the actor's own dice,
counted per face and per face with stars (a bid on face f counts f and the wild star, a star bid stars
only); every bid made so far (one bit per bid: bids only rise, so the set is the sequence); the last
`bids` bids as quantity and face, most recent first (recency: slot 0 is the opponent's last bid, slot 1
the actor's own); the probability that the last bid holds given the actor's own dice (0 before any).
Then the action: call, or a bid as quantity, face, its index, its jump over the last bid, its quantity
raise, how many of its dice the actor holds, and the probability that it holds given the actor's dice
(the opponent's dice uniform). The opponent's dice never appear.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from rcfr.games.dice import FACE_NAMES, Bluff
from rcfr.games.dice_fast import BIDS, DICE0, FACES, HEADER, LAST, MASK, NUM_BIDS, ROLL0, ROLLS0
from rcfr.options import check_int

from .encoders import FeatureEncoder


def serves(rules) -> bool:
    return isinstance(rules, Bluff)


def make(game, bids: int = 4) -> FeatureEncoder:
    rules = game.rules
    if not serves(rules):
        raise ValueError(f"features 'liars_dice' need liars_dice rules, not {rules.name!r}")
    bids = check_int("features 'liars_dice' option bids (recent bids kept)", bids, 0)
    names = (["player0", "player1", "bids_made"] + [f"own{f}" for f in FACE_NAMES]
             + [f"own_matching{f}" for f in FACE_NAMES] + [f"made{rules.bid_name(b)}" for b in range(rules.num_bids)]
             + [f"last{k}.{x}" for k in range(bids) for x in ["quantity"] + [f"face{f}" for f in FACE_NAMES]]
             + ["last_holds", "call", "bid_quantity"] + [f"bid_face{f}" for f in FACE_NAMES]
             + ["bid_index", "bid_jump", "quantity_raise", "bid_own_support", "bid_holds"])
    ints = np.append(rules.fast().data[0], bids)  # the game's data, then the option
    return FeatureEncoder(tuple(names), (ints, np.zeros(0)), _encode, set_width=int(_set_width(ints)),
                          encode_set=_encode_set, encode_action=_encode_action)


@njit(cache=True)
def _own_matching(ints, s, p, face):
    """The actor's dice that count for a bid on `face` (the face or a star; a star bid: stars only)."""
    faces = ints[FACES]
    dice = ints[DICE0 + p]
    start = HEADER + p * ints[ROLLS0] * ints[DICE0] + s[ROLL0 + p] * dice
    count = 0
    for i in range(dice):
        d = ints[start + i]
        if d == face or d == faces - 1:
            count += 1
    return count


@njit(cache=True)
def _holds(ints, s, p, bid):
    """P(bid `bid` holds | the actor's dice): the opponent's dice supply the rest, each matching with
    probability 2 / faces (1 / faces for a star bid)."""
    faces = ints[FACES]
    quantity, face = bid // faces + 1, bid % faces
    need = quantity - _own_matching(ints, s, p, face)
    if need <= 0:
        return 1.0
    dice = ints[DICE0 + 1 - p]
    if need > dice:
        return 0.0
    q = (1.0 if face == faces - 1 else 2.0) / faces
    total = 0.0
    for k in range(need, dice + 1):
        ways = 1.0
        for j in range(k):
            ways = ways * (dice - j) / (j + 1)
        total += ways * q ** k * (1.0 - q) ** (dice - k)
    return total


@njit(cache=True)
def _set_width(ints):
    """The columns before the action's: player, bids made, own dice, matching dice, bids made, recent bids,
    last_holds."""
    faces, n, recent = ints[FACES], ints[NUM_BIDS], ints[ints.size - 1]
    return 3 + 2 * faces + n + recent * (1 + faces) + 1


@njit(cache=True)
def _encode_set(data, s, action, out):
    """The columns that depend on the set alone (`action` unread)."""
    ints = data[0]
    faces, n = ints[FACES], ints[NUM_BIDS]
    recent = ints[ints.size - 1]
    total_dice = ints[DICE0] + ints[DICE0 + 1]
    p = s[BIDS] % 2
    dice = ints[DICE0 + p]
    out[p] = 1.0
    out[2] = s[BIDS] / n
    start = HEADER + p * ints[ROLLS0] * ints[DICE0] + s[ROLL0 + p] * dice
    for i in range(dice):
        out[3 + ints[start + i]] += 1.0 / dice
    for f in range(faces):
        out[3 + faces + f] = _own_matching(ints, s, p, f) / dice
    col = 3 + 2 * faces
    for b in range(n):
        if s[MASK] & (1 << b):
            out[col + b] = 1.0
    col += n
    k = 0
    for b in range(n - 1, -1, -1):  # the made bids, most recent (highest) first
        if k == recent:
            break
        if s[MASK] & (1 << b):
            out[col + k * (1 + faces)] = (b // faces + 1) / total_dice
            out[col + k * (1 + faces) + 1 + b % faces] = 1.0
            k += 1
    col += recent * (1 + faces)
    last = s[LAST]
    if last >= 0:
        out[col] = _holds(ints, s, p, last)


@njit(cache=True)
def _encode_action(data, s, action, out):
    """The action's columns: call, or the bid's quantity, face, index, jump, raise, own support and P(holds)."""
    ints = data[0]
    faces, n = ints[FACES], ints[NUM_BIDS]
    total_dice = ints[DICE0] + ints[DICE0 + 1]
    p = s[BIDS] % 2
    col = _set_width(ints)
    last = s[LAST]
    if action == n - (last + 1):  # "bluff": the call
        out[col] = 1.0
        return
    bid = last + 1 + action
    quantity, face = bid // faces + 1, bid % faces
    out[col + 1] = quantity / total_dice
    out[col + 2 + face] = 1.0
    col += 2 + faces
    out[col] = (bid + 1) / n
    out[col + 1] = (bid - last) / n
    out[col + 2] = (quantity - (last // faces + 1 if last >= 0 else 0)) / total_dice
    out[col + 3] = min(_own_matching(ints, s, p, face), quantity) / quantity
    out[col + 4] = _holds(ints, s, p, bid)


@njit(cache=True)
def _encode(data, s, action, out):
    _encode_set(data, s, action, out)
    _encode_action(data, s, action, out)
