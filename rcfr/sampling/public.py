"""The public tree of a compiled game, derived from its information sets, for public chance sampling.

A *public state* is what every player knows: the sequence of (public) actions and public chance
outcomes. Histories are grouped into public states by the smallest partition that (a) keeps every
information set inside one group, (b) gives the parents of a group's histories one group (public
knowledge is never forgotten) and (c) sends the children of a group's decision histories by the same
action to one group (actions are public). A chance group whose children all land in one group is
*private* (its outcome is hidden from someone: a dealt card, a rolled die); the public tree skips it.
Any other chance group is *public* (a board card): its outcomes lead to different public states.

Inside a public state, player p's *private state* is what p saw of the private chance outcomes: the
last private chance outcome on the way to the history, two of them identified when p cannot tell
them apart (they meet in one of p's information sets, or lie below outcomes p cannot tell apart).
Public chance sampling keeps one reach and one value per (public state, private state), a *slot*.

Nothing here depends on a game's rules: any game whose actions are public and whose chance outcomes
are each public or private works (the poker games, Bluff, Die-Roll Poker). Others (Goofspiel's
hidden bids, ...) fail with an error that says which condition they break.

Memory: the walk keeps per *terminal history* one entry (two int32 slots and the float64
chance-weighted payoff, 16 bytes) and per public state and slot a handful of numbers; the derivation
itself holds about ten int64 arrays over the histories while it runs.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from ..tree import Game

CHANCE, TERMINAL = -1, -2

PublicTree = namedtuple("PublicTree", [
    "kind", "parent", "action", "first_child", "num_children", "children", "prob", "weight", "histories",
    "first0", "count0", "first1", "count1", "up0", "up1", "infoset0", "infoset1",
    "term_first", "term_count", "term_slot0", "term_slot1", "term_value"])
PublicTree.__doc__ = """Public states numbered parent before child, the root 0. Per state: ``kind`` (acting
player 0/1, `CHANCE` for public chance, `TERMINAL`), ``parent`` (-1 at the root), ``action`` (the index of
the edge from the parent), children ``children[first_child: first_child + num_children]`` (by action at
decisions), ``histories`` (game histories the state stands for, the private chance histories skipped
above it included: what a visit counts as touched), player p's slots ``first_p .. first_p + count_p``
and, if terminal, its terminal histories ``term_first .. + term_count``. Per child edge: ``prob``, the
public chance probability of the outcome (1 at decisions), and ``weight``, the importance weight of
sampling it (1 / prob). Per slot of p: ``up_p`` (the slot of the same private state in the parent
state, -1 at the root) and ``infoset_p`` (p's information set where p acts, else -1). Per terminal
history: both players' slots and ``term_value`` = chance reach x player 0's payoff."""


def empty_public_tree() -> PublicTree:
    """A public tree with no states, in the dtypes `public_tree` gives (what the samplers that walk histories
    carry in `bundles.Tree.public`)."""
    i8, i32, i64, f64 = (np.zeros(0, t) for t in (np.int8, np.int32, np.int64, np.float64))
    dtypes = {"kind": i8, "histories": i64, "prob": f64, "weight": f64, "term_value": f64}
    return PublicTree(**{name: dtypes.get(name, i32) for name in PublicTree._fields})


class NotPublicError(ValueError):
    """The game has no public tree public chance sampling can walk (hidden actions, ...)."""


# ---- union-find ----------------------------------------------------------------------------------
@njit(cache=True)
def _find(uf, x):
    root = x
    while uf[root] != root:
        root = uf[root]
    while uf[x] != root:
        nxt = uf[x]
        uf[x] = root
        x = nxt
    return root


@njit(cache=True)
def _union(uf, a, b):
    """Merge the groups of a and b (the smaller root stays); True if they were apart."""
    ra, rb = _find(uf, a), _find(uf, b)
    if ra == rb:
        return False
    if ra < rb:
        uf[rb] = ra
    else:
        uf[ra] = rb
    return True


@njit(cache=True)
def _public_groups(player, parent, first_child, num_children, infoset, infoset_history):
    """Rules (a)-(c) of the module docstring to a fixed point. Returns each history's group (its
    smallest history) and -1, or a decision history whose group mixes different action counts."""
    H = len(player)
    uf = np.arange(H)
    for h in range(H):
        if player[h] >= 0:
            _union(uf, h, infoset_history[infoset[h]])
    rep = np.empty(H, np.int64)
    changed = True
    while changed:
        changed = False
        rep[:] = -1
        for h in range(H - 1, 0, -1):  # (b): one group, one parent group
            r = _find(uf, h)
            if rep[r] < 0:
                rep[r] = parent[h]
            elif _union(uf, rep[r], parent[h]):
                changed = True
        rep[:] = -1
        for h in range(H):  # (c): children by the same action, one group
            if player[h] < 0:
                continue
            r = _find(uf, h)
            if rep[r] < 0:
                rep[r] = h
                continue
            m = rep[r]
            if num_children[m] != num_children[h]:
                return uf, h
            for a in range(num_children[h]):
                if _union(uf, first_child[m] + a, first_child[h] + a):
                    changed = True
    for h in range(H):
        uf[h] = _find(uf, h)
    return uf, -1


@njit(cache=True)
def _private_labels(parent, private_edge, player, infoset, infoset_history, who):
    """Player `who`'s private state of every history: the last private chance outcome above it (H when
    there is none), outcomes identified as described in the module docstring."""
    H = len(parent)
    label = np.empty(H, np.int64)
    label[0] = H
    for h in range(1, H):
        label[h] = h if private_edge[h] else label[parent[h]]
    uf = np.arange(H + 1)
    for h in range(H):
        if player[h] == who:
            _union(uf, label[h], label[infoset_history[infoset[h]]])
    rep = np.empty(H + 1, np.int64)
    changed = True
    while changed:  # outcomes p cannot tell apart: so are the outcomes above them
        changed = False
        rep[:] = -1
        for e in range(H - 1, 0, -1):
            if not private_edge[e]:
                continue
            r = _find(uf, e)
            above = label[parent[e]]
            if rep[r] < 0:
                rep[r] = above
            elif _union(uf, rep[r], above):
                changed = True
    for h in range(H):
        label[h] = _find(uf, label[h])
    return label


@njit(cache=True)
def _public_ancestor(parent, in_public):
    """Each history's nearest proper ancestor in a public state (-1 above the public root)."""
    H = len(parent)
    anc = np.full(H, -1, np.int64)
    for h in range(1, H):
        p = parent[h]
        anc[h] = p if in_public[p] else anc[p]
    return anc


def _pairs_functional(keys: np.ndarray, values: np.ndarray) -> bool:
    """True if equal keys always come with equal values."""
    if len(keys) == 0:
        return True
    keys, values = keys.astype(np.int64), values.astype(np.int64)
    return len(np.unique(keys * (int(values.max()) + 1) + values)) == len(np.unique(keys))


def public_tree(game: Game) -> PublicTree:
    """Derive `game`'s public tree (see the module docstring); raises `NotPublicError` when the game
    has no public tree of the kind public chance sampling needs."""
    player, parent, first_child, num_children, infoset, infoset_history = (
        game.player, game.parent, game.first_child, game.num_children, game.infoset, game.infoset_history)
    H = len(player)
    uf, bad = _public_groups(player, parent, first_child, num_children, infoset, infoset_history)
    if bad >= 0:
        raise NotPublicError(f"pcs-cfr needs public actions: {game.name}'s history {bad} cannot be told apart "
                             f"from one with a different number of actions")
    is_root = uf == np.arange(H)  # a group is named by its smallest history; number them in that order
    roots = np.flatnonzero(is_root)
    group = (np.cumsum(is_root) - 1)[uf]
    del uf, is_root
    G = len(roots)
    kind = player[roots]
    if np.any(player != kind[group]):
        raise NotPublicError(f"pcs-cfr needs public turns: in {game.name} some player cannot tell whether it "
                             f"or the opponent (or chance) moves")
    group_parent = np.where(roots > 0, group[parent[roots]], -1)

    # decisions: one group per action (else the action is hidden)
    decisions = np.flatnonzero(kind >= 0)
    child_groups = [group[first_child[roots[d]] + np.arange(num_children[roots[d]])] for d in decisions]
    if any(len(np.unique(c)) != len(c) for c in child_groups):
        raise NotPublicError(f"pcs-cfr needs public actions: {game.name} has actions another player cannot see")

    # chance: private when all outcomes lead to one group
    chance_children = np.flatnonzero((parent >= 0) & (player[np.maximum(parent, 0)] == CHANCE))
    chance_children = chance_children[chance_children > 0]
    edge_keys = np.unique(group[parent[chance_children]] * G + group[chance_children])
    edge_pairs = np.stack([edge_keys // G, edge_keys % G])
    outcome_groups = np.bincount(edge_pairs[0], minlength=G)
    private = (kind == CHANCE) & (outcome_groups == 1)
    is_public = ~private
    single_child = np.full(G, -1)
    single_child[edge_pairs[0]] = edge_pairs[1]  # meaningful for private groups
    node_of = np.arange(G)  # the public state a group stands in (a private chance group: the one below)
    for g in range(G - 1, -1, -1):
        if private[g]:
            node_of[g] = node_of[single_child[g]]
    public_groups = np.flatnonzero(is_public)
    node_id = np.full(G, -1)
    node_id[public_groups] = np.arange(len(public_groups))
    node_of = node_id[node_of]
    K = len(public_groups)
    if node_of[0] != 0:
        raise NotPublicError(f"{game.name}: the public tree does not start at the first public state")
    above = np.full(G, -1)  # nearest public group above each group
    for g in range(1, G):
        q = group_parent[g]
        above[g] = q if is_public[q] else above[q]
    histories = np.bincount(node_of[group], minlength=K).astype(np.int64)

    # children of each public state (decisions by action, public chance by outcome state)
    kids, probs = [[] for _ in range(K)], [[] for _ in range(K)]
    for d, c in zip(decisions, child_groups):
        kids[node_id[d]] = list(node_of[c])
        probs[node_id[d]] = [1.0] * len(c)
    reach = game.chance_reach
    public_chance = np.flatnonzero((kind == CHANCE) & is_public)
    if len(public_chance):
        mine = is_public[group[parent[chance_children]]]
        xs = chance_children[mine]
        source, target = node_of[group[parent[xs]]], node_of[group[xs]]
        key = source * K + target
        pairs, inverse = np.unique(key, return_inverse=True)
        mass = np.bincount(inverse, reach[xs])
        members = np.flatnonzero(np.isin(group, public_chance))
        total = np.bincount(node_of[group[members]], reach[members], minlength=K)
        for (s, t), m in zip(zip(pairs // K, pairs % K), mass):
            kids[s].append(int(t))
            probs[s].append(m / total[s])
    num = np.array([len(k) for k in kids], np.int32)
    first = (np.cumsum(num) - num).astype(np.int32)
    children = np.array([c for k in kids for c in k], np.int32)
    prob = np.array([p for ps in probs for p in ps], np.float64)
    parent_node = np.full(K, -1, np.int32)
    action = np.zeros(K, np.int32)
    parent_node[children] = np.repeat(np.arange(K, dtype=np.int32), num)
    action[children] = np.concatenate([np.arange(n) for n in num]).astype(np.int32) if len(children) else []
    if np.any(parent_node[1:] < 0) or not np.array_equal(node_id[above[public_groups[1:]]], parent_node[1:]):
        raise NotPublicError(f"{game.name}: public states do not form a tree")

    # slots: (public state, private state) per player
    in_public = is_public[group]
    node = node_of[group]
    private_edge = np.zeros(H, np.bool_)
    private_edge[chance_children] = private[group[parent[chance_children]]]
    anc = _public_ancestor(parent, in_public)
    hist = np.flatnonzero(in_public)
    slots, firsts, counts, ups, infosets = [], [], [], [], []
    for p in (0, 1):
        label = _private_labels(parent, private_edge, player, infoset, infoset_history, p)
        keys, slot = np.unique(node[hist] * (H + 1) + label[hist], return_inverse=True)
        del label
        full = np.full(H, -1, np.int32)
        full[hist] = slot
        del slot
        count = np.bincount(keys // (H + 1), minlength=K).astype(np.int32)
        up = np.full(len(keys), -1, np.int64)
        below = hist[anc[hist] >= 0]
        if not _pairs_functional(full[below], full[anc[below]]):
            raise NotPublicError(f"{game.name}: player {p}'s private states are not refined along the public tree")
        up[full[below]] = full[anc[below]]
        mine = hist[player[hist] == p]
        if not _pairs_functional(full[mine], infoset[mine]):
            raise NotPublicError(f"{game.name}: player {p}'s private state does not determine its information set")
        sets = np.full(len(keys), -1, np.int64)
        sets[full[mine]] = infoset[mine]
        slots.append(full)
        firsts.append((np.cumsum(count) - count).astype(np.int32))
        counts.append(count)
        ups.append(up.astype(np.int32))
        infosets.append(sets.astype(np.int32))

    # terminal histories, grouped by public state
    terminals = np.flatnonzero(player == TERMINAL)
    terminals = terminals[np.argsort(node[terminals], kind="stable")]
    term_count = np.bincount(node[terminals], minlength=K).astype(np.int32)
    return PublicTree(
        kind=kind[public_groups].astype(np.int8), parent=parent_node, action=action, first_child=first,
        num_children=num, children=children, prob=prob, weight=1.0 / prob, histories=histories,
        first0=firsts[0], count0=counts[0], first1=firsts[1], count1=counts[1], up0=ups[0], up1=ups[1],
        infoset0=infosets[0], infoset1=infosets[1],
        term_first=(np.cumsum(term_count) - term_count).astype(np.int32), term_count=term_count,
        term_slot0=slots[0][terminals], term_slot1=slots[1][terminals],
        term_value=reach[terminals] * np.asarray(game.utility)[terminals])


def public_tree_nbytes(tree: PublicTree) -> int:
    """Bytes held by a public tree's arrays."""
    return sum(a.nbytes for a in tree)
