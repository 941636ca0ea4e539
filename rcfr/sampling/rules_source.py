"""The rules as a state source of the sampling walks: `Rules`, and the accessors of `rcfr.sampling.states` for it.

A walk's handle is a row of ``Rules.states`` (the walk's slot, see `rcfr.sampling.bundles.Scratch`): `child`
writes the child's state into the slot's row with the game's `FastGame.child` and collapses forced moves
as the compiler does, so a walk meets the same nodes in the same order on both sources. Row 0 holds the
root and is never a child's slot.

Information sets are numbered as first met. `infoset` looks the set's code (`FastGame.infoset_code`; under a
`rcfr.sources.abstraction.CodeAbstraction`, ``2 * abstract code + player``, so merged sets share one id) up in
an open-addressing table (``keys``/``ids``, at most half full) and, the first time, gives the new set the
next ``num_actions`` slots of the regret layout (``first_seq``), so memory grows with the sets met, not with
the histories. The arrays cannot grow inside a compiled walk: `room` tells the driver to return before an
iteration once the sets or slots are half used, and `RulesBuffers.grow` doubles them between iterations. A
walk that still runs out (one iteration meeting more new sets than all before it) files the rest under a
*sink* set past the end, marks ``meta[OVERFLOW]`` and the solver raises: no write lands out of bounds. An
abstraction that merges sets with different legal actions (or gives a code outside [0, 2^62)) files the
decision under the sink too and records the key in ``meta[MISMATCH]``: the solver raises, naming it.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit
from numba.experimental.function_type import WrapperAddressProtocol, _get_wrapper_address

from ..games.base import TERMINAL
from ..games.fast import SIGNATURES
from . import states

SETS, SEQS, SET_CAPACITY, SEQ_CAPACITY, OVERFLOW, MISMATCH = range(6)  # entries of Rules.meta
NO_MISMATCH = -1  # meta[MISMATCH] until an abstraction's code goes wrong (then: the key, or -2 out of range)
EMPTY = -1  # a free entry of Rules.keys

Rules = namedtuple("Rules", [
    # the game: its FastGame functions (function pointers, one compiled driver for every game) and data
    "fn_player", "fn_moves", "fn_child", "fn_utility", "fn_code", "data",
    # an information-set abstraction's code function, its data and out[2] (empty `abstract_out`: none)
    "fn_abstract", "abstract_data", "abstract_out",
    # the walk's states (one row per slot), each row's mover, number of moves and information set (-1: not
    # looked up yet), a spare row, chance probabilities of one node
    "states", "row_player", "row_moves", "row_set", "spare", "probs",
    # the information-set index: code -> id table, each id's code, its layout, counts and capacities
    "keys", "ids", "codes", "first_seq", "num_actions", "average_first", "signatures", "meta",
    # per set, the state of the first history met and its player (empty rows: not kept)
    "set_states",
    # what the walks read from a compiled tree and the rules path does not have (empty)
    "abstract", "parent_seq", "baseline_index", "baseline_stride", "chance_key", "public"])
Rules.__doc__ = """The rules as a state source (see the module docstring). Fields the walks read from
`rcfr.sampling.bundles.Tree` keep their names and meaning: ``first_seq[I]``, ``num_actions[I]``,
``average_first[I]`` (= ``first_seq[I]``: averages are per set met, full or abstract), and empty ``abstract``, ``parent_seq``,
``baseline_index``, ``chance_key`` and ``public`` (no abstraction, lazy averaging, history baselines, common
chance-sampling or public tree on this path)."""


class FastFunction(WrapperAddressProtocol):
    """A `FastGame` function as a first-class function pointer of its role's signature, so that `Rules` has
    one numba type for every game (one compiled driver, cached on disk) instead of one per game."""

    def __init__(self, function, signature):
        self._signature = SIGNATURES.get(signature, signature)  # a role's name, or a signature
        self._address = _get_wrapper_address(function, self._signature)
        self._function = function  # keeps the compiled code alive

    def __wrapper_address__(self):
        return self._address

    def signature(self):
        return self._signature


def is_rules(source) -> bool:
    """True for the numba type of a `Rules` bundle."""
    return getattr(source, "instance_class", None) is Rules


class SetFreeRules(Rules):
    """`Rules` for walks that number no information set (lean sampled RCFR with its models in the walk, feature-row
    targets and the mixture average: nothing is read or written per set). Its own numba type, so that `infoset`
    answers the sink, id ``meta[SET_CAPACITY]`` (0: the arrays hold no set, only the sink's ``widest`` slots),
    without a lookup; the other accessors are the rules'. What the walks still write under the sink (the traverser's
    ``delta``, one touched entry) is of fixed size and read by no one."""

    __slots__ = ()


def is_set_free(source) -> bool:
    """True for the numba type of a `SetFreeRules` bundle."""
    return getattr(source, "instance_class", None) is SetFreeRules


def rules_accessor(accessor):
    """Register the decorated function as `accessor`'s implementation for a `Rules` source (`states.implements`:
    numba's choice at typing time), never inlined: the walks call it; and for a `SetFreeRules` one, except
    `infoset` (`_no_infoset` below)."""
    def register(implementation):
        if accessor is not states.infoset:
            states.implements(accessor, is_set_free, "never")(implementation)
        return states.implements(accessor, is_rules, "never")(implementation)
    return register


@njit(cache=True, inline="always")
def settle(source, slot):
    """Collapse forced moves in place: while the state in row `slot` has exactly one move, become its child. Then
    note the row's mover and number of moves, so that the walk's later questions about the row (`mover`,
    `num_moves`, asked several times per node) read an array instead of calling the game again."""
    data, spare, s = source.data, source.spare, source.states[slot]
    p = source.fn_player(data, s)
    m = 0
    while p != TERMINAL:
        m = source.fn_moves(data, s)
        if m != 1:
            break
        source.fn_child(data, s, 0, spare)
        for j in range(s.shape[0]):  # (a slice assignment needs numba's reference counting)
            s[j] = spare[j]
        p = source.fn_player(data, s)
        m = 0
    source.row_player[slot] = p
    source.row_moves[slot] = m
    source.row_set[slot] = -1


@njit(cache=True, inline="always")
def probe(keys, code):
    """The entry of `code` in the open-addressing table `keys`: where it is, or the free entry it would take."""
    mask = keys.shape[0] - 1
    i = np.int64((np.uint64(code) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(32)) & mask
    while keys[i] != EMPTY and keys[i] != code:
        i = (i + 1) & mask
    return i


@njit(cache=True, inline="always")
def _add_set(source, i, code, n, signature, s):
    """Number the set of `code` (free table entry i, n actions, legal-action `signature`, met at state s) as
    the next id, or file it under the sink (id = set capacity, marking the overflow) when the arrays are full.
    Where ``set_states`` has rows, the set's row gets s and its player (what on-demand features read)."""
    meta = source.meta
    I, f = meta[SETS], meta[SEQS]
    if I >= meta[SET_CAPACITY] or f + n > meta[SEQ_CAPACITY]:
        meta[OVERFLOW] = 1
        return meta[SET_CAPACITY]
    source.keys[i] = code
    source.ids[i] = I
    source.codes[I] = code
    source.first_seq[I] = f
    source.num_actions[I] = n
    source.average_first[I] = f
    source.signatures[I] = signature
    if source.set_states.shape[0] > 0:
        row = source.set_states[I]
        for j in range(s.shape[0]):
            row[j] = s[j]
        row[s.shape[0]] = source.fn_player(source.data, s)
    meta[SETS] = I + 1
    meta[SEQS] = f + n
    return I


@njit(cache=True, inline="always")
def _mismatch(source, key):
    """File a decision whose abstract key went wrong under the sink set, recording the first such key."""
    meta = source.meta
    if meta[MISMATCH] == NO_MISMATCH:
        meta[MISMATCH] = key
    return meta[SET_CAPACITY]


@rules_accessor(states.mover)
def _mover(source, h):
    return source.row_player[h]


@rules_accessor(states.num_moves)
def _num_moves(source, h):
    return source.row_moves[h]


@rules_accessor(states.child)
def _child(source, h, k, slot):
    rows = source.states
    source.fn_child(source.data, rows[h], k, rows[slot])
    settle(source, slot)
    return slot


@rules_accessor(states.outcome_probs)
def _outcome_probs(source, h):
    data, s, probs = source.data, source.states[h], source.probs
    for k in range(source.row_moves[h]):
        probs[k] = source.fn_child(data, s, k, source.spare)
    return probs, 0


@rules_accessor(states.infoset)
def _infoset(source, h):
    I = source.row_set[h]
    if I < 0:
        I = _lookup(source, h)
        source.row_set[h] = I
    return I


@states.implements(states.infoset, is_set_free, "never")
def _no_infoset(source, h):
    return source.meta[SET_CAPACITY]


@njit(cache=True, inline="always")
def _lookup(source, h):
    """The id of the information set at row h (numbering a new set; see the module docstring)."""
    data, s, out = source.data, source.states[h], source.abstract_out
    signature = 0
    if out.shape[0] == 0:
        code = source.fn_code(data, s)
    else:
        source.fn_abstract(source.abstract_data, s, out)
        if out[0] < 0 or out[0] >= 1 << 62:
            return _mismatch(source, -2)
        code, signature = 2 * out[0] + source.row_player[h], out[1]
    i = probe(source.keys, code)
    if source.keys[i] != code:
        return _add_set(source, i, code, source.row_moves[h], signature, s)
    I = source.ids[i]
    if out.shape[0] > 0 and (source.signatures[I] != signature or source.num_actions[I] != source.row_moves[h]):
        return _mismatch(source, code)
    return I


@rules_accessor(states.payoff)
def _payoff(source, h):
    return source.fn_utility(source.data, source.states[h])


@rules_accessor(states.edge_slot)
def _edge_slot(source, h, k, slot, J):
    return source.first_seq[J] + k if J >= 0 else -1


@rules_accessor(states.room)
def _room(source):
    meta = source.meta
    return 2 * meta[SETS] <= meta[SET_CAPACITY] and 2 * meta[SEQS] <= meta[SEQ_CAPACITY]


@njit(cache=True)
def number_sets(index, meta, set_states, codes, num_actions, signatures, states):
    """The ids of the sets of these codes, numbering those not met yet in the order given as `_lookup` does (their
    actions, signatures and, where kept, state rows with the player); -1 for each one the arrays had no room for
    (marking the overflow: the caller grows them first). Sets met elsewhere, by the shards of a sampled batch
    (`rcfr.solvers.lean_rules`). `index`: the `Rules` fields keys, ids, codes, first_seq, num_actions, average_first,
    signatures."""
    keys, ids, known, first_seq, sizes, average_first, known_signatures = index
    out = np.empty(codes.shape[0], np.int64)
    for j in range(codes.shape[0]):
        i = probe(keys, codes[j])
        if keys[i] == codes[j]:
            out[j] = ids[i]
            continue
        I, f, n = meta[SETS], meta[SEQS], num_actions[j]
        if I >= meta[SET_CAPACITY] or f + n > meta[SEQ_CAPACITY]:
            meta[OVERFLOW] = 1
            out[j] = -1
            continue
        keys[i], ids[i], known[I] = codes[j], I, codes[j]
        first_seq[I], sizes[I], average_first[I], known_signatures[I] = f, n, f, signatures[j]
        if set_states.shape[0] > 0:
            set_states[I] = states[j]
        meta[SETS], meta[SEQS] = I + 1, f + n
        out[j] = I
    return out


@njit(cache=True)
def reindex(keys, ids, codes, count):
    """Fill an empty table with the first `count` ids of `codes` (after the table was resized)."""
    for I in range(count):
        i = probe(keys, codes[I])
        keys[i] = codes[I]
        ids[i] = I
