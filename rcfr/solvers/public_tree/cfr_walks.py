"""CFR on Bluff's public bid tree: a direct index of its information sets and one numba walk that updates,
or evaluates, a whole table with vectors over the private rolls.

Why: Bluff's bids and calls are public and only the rolls are private, so an information set is (own roll,
bid sequence) and, under the last-r-bids recall abstraction (`rcfr.abstraction.bluff_last_bids`), (own
roll, whose turn, last r bids). Tables are laid out by public node, then roll, then action:

    element of (roll, node, action) = offset[node] + roll * actions(node) + action

where ``offset`` holds one int64 per public node (not per set: a set is its node's block plus an
arithmetic roll term), assigned in depth-first order so a walk reads the table front to back. The full
game's nodes are indexed by their bid mask; an abstract node by ``2 * (kept mask) + player`` (the kept
mask is the last r bids; with fewer bids it is the whole sequence, whose length gives the player). A
node's actions follow from its last bid (the highest bit), the same in the full game and the
abstraction. No hash, no per-set key: Bluff(2,2)'s 528,482,262 (set, action) pairs take one number per
pair per table.

`walk` is vanilla CFR when given every roll of both players (weights: the roll probabilities) and
chance-sampled CFR when given one sampled roll per player (weight 1): the rolls a walk carries are
*positions*, so both are the same loop. At a call the payoff depends on the rolls only through how many
dice show the bid's face, so values there cost O(rolls) (`rcfr.evaluation.bluff._call`). ``mode=EVALUATE``
walks the normalized average table instead and takes the acting player's best action roll by roll: the
exact best responses of the average, in the same pass. A chance-sampled update takes `sampled_walk`,
the same loop with scalars (one roll per player), equal to `walk` bit for bit and several times faster.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from ...evaluation.bluff import _call, finish
from ...games.dice_bid_tree import actions, at_node, bid_path, descend, next_action

UPDATE, EVALUATE = 0, 1

#: Fields of the walk's `out` array: player 0's expected value of the walked profile (the average's
#: in EVALUATE), the two best-response values (EVALUATE) and the public nodes entered.
OUT_FIELDS = ("value", "br0", "br1", "public_nodes")


@intrinsic
def _prefetch(typingctx, table, index):
    """A hint to bring ``table[index]`` into the cache for writing (LLVM's prefetch: no load, no fault, no
    effect on results). Why: the scalar walk mostly waits for its table rows, which lie at strides no
    hardware prefetcher follows; their offsets are known a node ahead."""
    if not isinstance(table, types.Array) or table.ndim != 1 or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        kind = signature.args[0]
        array = context.make_array(kind)(context, builder, args[0])
        at = context.cast(builder, args[1], signature.args[1], types.intp)
        pointer = cgutils.get_item_pointer2(context, builder, data=array.data,
                                            shape=cgutils.unpack_tuple(builder, array.shape),
                                            strides=cgutils.unpack_tuple(builder, array.strides), layout=kind.layout,
                                            inds=[at], wraparound=False, boundscheck=False)
        byte, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        hint = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [byte, i32, i32, i32]),
                                              "llvm.prefetch.p0")
        # for writing, kept in every cache level, data
        builder.call(hint, [builder.bitcast(pointer, byte), ir.Constant(i32, 1), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return types.void(table, index), codegen


@njit(cache=True, inline="always")
def _called(holds, caller, bid, actor, x, y):
    """At `caller`'s call of `bid`, reached with `x` by the node's `actor` and `y` by the other player: the
    actor's counterfactual value, the other's, and player 0's expected payoff (`_call` with one roll each,
    the same products: player 0 gets +1 when the caller is wrong)."""
    u = (1.0 if caller == 1 else -1.0) if holds[bid] else (-1.0 if caller == 1 else 1.0)
    reach0, reach1 = (x, y) if actor == 0 else (y, x)
    t0 = u * reach1
    t1 = -u * reach0
    return (t0, t1, reach0 * t0) if actor == 0 else (t1, t0, reach0 * t0)


#: how many nodes ahead of the scalar walk its look-ahead cursor fetches table rows
AHEAD = 16


@njit(cache=True, inline="always")
def _step_ahead(nb, span, counts, rolls, regrets, avg, abstracted, c_last, c_below, c_next, c_block, cd):
    """Move the look-ahead cursor (a depth-first walk of its own, no pruning) to its next node and fetch that
    node's rows; returns its depth, -1 past the last node."""
    while cd >= 0:
        b = c_next[cd]
        if b < nb - 1:  # its next child decision node
            c_next[cd] = b + 1
            q = 1 - (cd & 1)
            at = c_below[cd]
            c_below[cd] = at + span[b, q]
            cd += 1
            na = nb - b
            c_last[cd], c_block[cd], c_next[cd], c_below[cd] = b, at, b + 1, at + counts[q] * na
            _prefetch(avg, at + rolls[q] * na)
            if not abstracted:
                _prefetch(regrets, at + rolls[q] * na)
            return cd
        cd -= 1
    return cd


@njit(cache=True, inline="always")
def _row_strategy(table, row, na, positive, out, start):
    """``out[start:start+na]``: the row's entries normalized, or with `positive` regret matching (the positive
    part normalized); uniform where that sums to zero."""
    total = 0.0
    for a in range(na):
        x = table[row + a]
        if not positive or x > 0.0:
            total += x
    for a in range(na):
        x = table[row + a]
        if total > 0.0:
            out[start + a] = x / total if (not positive or x > 0.0) else 0.0
        else:
            out[start + a] = 1.0 / na


@njit(cache=True)
def fill_offsets(nb, r, rolls0, rolls1, full, abstract):
    """Assign every table block in depth-first order: ``full[mask]`` (the full game's table) and, when
    ``abstract`` is not empty, ``abstract[2 * kept + player]`` (the last-r-bids abstraction's table; r
    bids kept). Entries not met stay -1. Returns the two table sizes."""
    full[:] = -1
    abstract[:] = -1
    rolls = (rolls0, rolls1)
    sizes = np.zeros(2, np.int64)
    last, mask, kept, nxt = bid_path(nb)
    d = 0
    fresh = True
    while True:
        if fresh:
            fresh = False
            p = d & 1
            n = actions(nb, last[d], d)
            full[mask[d]] = sizes[0]
            sizes[0] += rolls[p] * n
            if abstract.shape[0]:
                k = 2 * kept[d] + p
                if abstract[k] < 0:
                    abstract[k] = sizes[1]
                    sizes[1] += rolls[p] * n
        b = last[d] + 1 + nxt[d]
        if b < nb - 1:  # a child decision node (the top bid leaves only the forced call)
            nxt[d] += 1
            d = descend(last, mask, kept, nxt, d, b, r)
            fresh = True
            continue
        if d == 0:
            break
        d -= 1
    return sizes


@njit(cache=True)
def walk(nb, faces, act0, act1, q0, q1, c0, c1, r, abstracted, regrets, avg, delta, off_reg, off_avg, mode,
         regret_players, average_players, weight, clip, out):
    """One depth-first walk of the bid tree carrying, per player, the rolls ``act_p`` (positions), their
    chance weights ``q_p`` and face counts ``c_p`` (rows per position). UPDATE: strategies by regret
    matching on `regrets` (the abstract table when `abstracted`); the players in the bit set
    `regret_players` add their counterfactual regrets into `delta` (the regret table itself, clipped at
    zero when `clip`, unless abstracted: an abstract set is met at many nodes, so its sum is applied after
    the walk); those in `average_players` add ``weight x own reach x strategy`` to `avg` (full sets).
    EVALUATE: the strategies are `avg` normalized (uniform where it is zero) and the acting player's
    value is its best action per roll. Writes `OUT_FIELDS` into `out`."""
    acts = (act0, act1)
    n = (act0.shape[0], act1.shape[0])
    width = max(n[0], n[1])
    depth = nb + 1
    last, mask, kept, nxt = bid_path(nb)
    base_r = np.zeros(depth, np.int64)
    reach = np.ones((2, depth, width))
    val = np.zeros((2, depth, width))
    sig = np.empty((depth, width, nb + 1))
    cv = np.zeros((depth, width, nb + 1))
    ev = np.zeros(depth)
    t = np.zeros((2, width))
    buckets = np.zeros(max(c0.max(), c1.max()) + 2)
    nodes = 0
    d = 0
    fresh = True
    while True:
        p, o, L, na = at_node(nb, last, d)
        act = acts[p]
        if fresh:  # enter the node: the acting player's strategy per roll; credit its average
            fresh = False
            nodes += 1
            base_a = off_avg[mask[d]]
            base_r[d] = off_reg[2 * kept[d] + p] if abstracted else base_a
            credit = mode == UPDATE and (average_players >> p) & 1
            for i in range(n[p]):
                s = sig[d, i]
                if mode == EVALUATE:
                    _row_strategy(avg, base_a + act[i] * na, na, False, s, 0)
                    continue
                _row_strategy(regrets, base_r[d] + act[i] * na, na, True, s, 0)
                own = reach[p, d, i]
                if credit and own > 0.0:
                    row = base_a + act[i] * na
                    for a in range(na):
                        avg[row + a] += weight * own * s[a]
            for i in range(n[o]):
                val[o, d, i] = 0.0
            ev[d] = 0.0
        a = next_action(nxt, d, na)
        if a >= 0:
            live = False
            for i in range(n[p]):
                x = reach[p, d, i] * sig[d, i, a]
                reach[p, d + 1, i] = x
                live |= x > 0.0
            for i in range(n[o]):
                x = reach[o, d, i]
                reach[o, d + 1, i] = x
                live |= x > 0.0
            if not live:  # neither player reaches it: it adds nothing
                for i in range(n[p]):
                    cv[d, i, a] = 0.0
                continue
            if a == na - 1 and d > 0:  # the acting player calls the last bid
                e = _call(p, L, faces, q0, q1, c0, c1, reach[0, d + 1], reach[1, d + 1], t[0], t[1], buckets)
            else:
                b = L + 1 + a
                if b < nb - 1:  # a decision node: go down
                    d = descend(last, mask, kept, nxt, d, b, r)
                    fresh = True
                    continue
                # the top bid: the next player's call is forced (collapsed, as in the compiled tree)
                e = _call(o, b, faces, q0, q1, c0, c1, reach[0, d + 1], reach[1, d + 1], t[0], t[1], buckets)
            for i in range(n[p]):
                cv[d, i, a] = t[p, i]
            for i in range(n[o]):
                val[o, d, i] += t[o, i]
            ev[d] += e
            continue
        # node done: the acting player's values (and regrets), then fold into the parent
        update = mode == UPDATE and (regret_players >> p) & 1
        for i in range(n[p]):
            v = 0.0
            if mode == EVALUATE:
                v = -np.inf
                for a in range(na):
                    v = max(v, cv[d, i, a])
            else:
                for a in range(na):
                    v += sig[d, i, a] * cv[d, i, a]
            val[p, d, i] = v
            if update:
                row = base_r[d] + act[i] * na
                for a in range(na):
                    x = delta[row + a] + (cv[d, i, a] - v)
                    delta[row + a] = max(x, 0.0) if clip else x
        if d == 0:
            break
        d -= 1  # the parent's acting player is o
        a = nxt[d] - 1
        for i in range(n[o]):
            cv[d, i, a] = val[o, d + 1, i]
        for i in range(n[p]):
            val[p, d, i] += val[p, d + 1, i]
        ev[d] += ev[d + 1]
    finish(out, ev, val, n[0], n[1])
    out[3] = nodes


@njit(cache=True)
def spans(nb, rolls0, rolls1):
    """``spans[b, p]``: the table entries of the subtree below bid `b` when player `p` is to act there (every
    block `fill_offsets` assigns in it, its own first), for the decision nodes ``b < nb - 1``; and the whole
    table's size (the root's subtree). Why: blocks are assigned depth first, so a walk in the same order
    finds each node's offset by adding these up, without reading ``full[mask]`` (a 64 MB array for
    Bluff(2,2), met in an order far from its own)."""
    rolls = (rolls0, rolls1)
    out = np.zeros((max(nb - 1, 1), 2), np.int64)
    for b in range(nb - 2, -1, -1):
        for p in range(2):
            size = rolls[p] * actions(nb, b, 1)
            for c in range(b + 1, nb - 1):
                size += out[c, 1 - p]
            out[b, p] = size
    total = rolls0 * actions(nb, -1, 0)
    for c in range(nb - 1):
        total += out[c, 1]
    return out, total


@njit(cache=True)
def sampled_walk(nb, faces, r0, r1, c0, c1, r, abstracted, regrets, avg, delta, off_reg, span, regret_players,
                 average_players, weight, clip, out):
    """`walk` in UPDATE mode for one sampled roll per player (``r0``, ``r1``: rows of the face counts ``c0``,
    ``c1``), with scalars. Why: with vectors of one entry, `walk`'s fixed cost per node (loops over rolls,
    `_call`'s buckets) is most of its time. Here each player's reach is one number, a set is one row through
    the same index, and a call's payoff is one comparison (``holds``, per bid, for this pair of rolls). A
    full set's block offset is counted as the walk goes (`spans`: the offsets `fill_offsets` assigns, in
    the same order), an abstract set's read from `off_reg`. Every sum is taken in `walk`'s order with its
    operands, so the tables, `out` and the nodes entered are `walk`'s (bit for bit:
    tests/test_bluff_public_cfr.py)."""
    depth = nb + 1
    last, mask, kept, nxt = bid_path(nb)
    row_r = np.zeros(depth, np.int64)
    block = np.zeros(depth, np.int64)  # the node's block in the full table
    below = np.zeros(depth, np.int64)  # where the block of the node's next child decision node is
    c_last = np.zeros(depth, np.int64)  # the look-ahead cursor's walk
    c_block = np.zeros(depth, np.int64)
    c_below = np.zeros(depth, np.int64)
    c_next = np.zeros(depth, np.int64)
    cd = 0
    reach = np.ones((depth, 2))
    val = np.zeros(depth)  # the value of the player not acting at depth d (summed over the node's actions)
    ev = np.zeros(depth)
    sig = np.empty((depth, nb + 1))
    cv = np.zeros((depth, nb + 1))
    holds = np.empty(nb, np.bool_)  # does bid b hold for these rolls (at least its quantity show its face)
    for b in range(nb):
        f = b % faces
        holds[b] = c0[r0, f] + c1[r1, f] >= b // faces + 1
    rolls = (r0, r1)
    counts = (c0.shape[0], c1.shape[0])
    nodes = 0
    d = 0
    fresh = True
    while True:
        p, o, L, na = at_node(nb, last, d)
        if fresh:  # enter the node: the acting player's strategy; credit its average
            fresh = False
            nodes += 1
            row_a = block[d] + rolls[p] * na
            below[d] = block[d] + counts[p] * na
            if cd < 0 or c_block[cd] > block[d]:  # the cursor is ahead: one more node
                if cd >= 0:
                    cd = _step_ahead(nb, span, counts, rolls, regrets, avg, abstracted, c_last, c_below, c_next,
                                     c_block, cd)
            else:  # at the start or after a subtree passed over: from here, AHEAD nodes
                for k in range(d + 1):
                    c_last[k], c_block[k], c_below[k] = last[k], block[k], below[k]
                    c_next[k] = last[k] + 1 + nxt[k]
                cd = d
                for k in range(AHEAD):
                    cd = _step_ahead(nb, span, counts, rolls, regrets, avg, abstracted, c_last, c_below, c_next,
                                     c_block, cd)
            row_r[d] = (off_reg[2 * kept[d] + p] + rolls[p] * na) if abstracted else row_a
            _row_strategy(regrets, row_r[d], na, True, sig[d], 0)
            own = reach[d, p]
            if (average_players >> p) & 1 and own > 0.0:
                for a in range(na):
                    avg[row_a + a] += weight * own * sig[d, a]
            val[d] = 0.0
            ev[d] = 0.0
        a = next_action(nxt, d, na)
        if a >= 0:
            b = L + 1 + a
            call = a == na - 1 and d > 0  # the acting player calls the last bid
            child = not call and b < nb - 1  # a decision node (its block is passed over if not entered)
            if child:
                block[d + 1] = below[d]
                below[d] += span[b, o]
            x = reach[d, p] * sig[d, a]
            y = reach[d, o]
            if not (x > 0.0 or y > 0.0):  # neither player reaches it: it adds nothing
                cv[d, a] = 0.0
                continue
            if child:  # go down
                reach[d + 1, p] = x
                reach[d + 1, o] = y
                d = descend(last, mask, kept, nxt, d, b, r)
                fresh = True
                continue
            mine, theirs, gain = _called(holds, p if call else o, L if call else b, p, x, y)
            cv[d, a] = mine
            val[d] += theirs
            ev[d] += gain
            continue
        # node done: the acting player's value (and regrets), then fold into the parent
        v = 0.0
        for a in range(na):
            v += sig[d, a] * cv[d, a]
        if (regret_players >> p) & 1:
            row = row_r[d]
            for a in range(na):
                z = delta[row + a] + (cv[d, a] - v)
                delta[row + a] = max(z, 0.0) if clip else z
        if d == 0:
            out[0] = ev[0]
            out[1] = v
            out[2] = val[0]
            out[3] = nodes
            return
        d -= 1  # the parent's acting player is o
        cv[d, nxt[d] - 1] = val[d + 1]
        val[d] += v
        ev[d] += ev[d + 1]


@njit(cache=True)
def apply_delta(regrets, delta, clip):
    """Add an abstract walk's regret sums to the table (clipped at zero for regret-matching+) and clear them."""
    for i in range(regrets.shape[0]):
        x = regrets[i] + delta[i]
        regrets[i] = max(x, 0.0) if clip else x
        delta[i] = 0.0


@njit(cache=True)
def fill_rows(nb, codes, first, table, offsets, r, abstracted, off_reg, positive, probs):
    """Rows of a `CodePolicy` (sets `codes`, sorted, with offsets `first`) from a table: normalized (the
    average) or by regret matching (`positive`: the current strategy, read from the abstract table when
    `abstracted`)."""
    for j in range(codes.shape[0]):
        code = codes[j]
        p = code & 1
        roll = (code >> 1) >> nb
        m = (code >> 1) & ((np.int64(1) << nb) - 1)
        na = first[j + 1] - first[j]
        if abstracted:
            kept = np.int64(0)
            k = 0
            for b in range(nb - 1, -1, -1):  # the r highest bids are the r most recent
                if k < r and m & (np.int64(1) << b):
                    kept |= np.int64(1) << b
                    k += 1
            row = off_reg[2 * kept + p] + roll * na
        else:
            row = offsets[m] + roll * na
        _row_strategy(table, row, na, positive, probs, first[j])
