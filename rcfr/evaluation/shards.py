"""The shards of the rules path's evaluation walk reduced into what one walk would have built.

A shard (`rcfr.evaluation.rules._walk` with a cut) walks some subtrees below a cut depth and numbers the sets it
meets as one walk does: the policy's sets by their row, the others (``default="uniform"``, or every full set
of an abstract policy) as it meets them. `merge` renumbers those *extra* sets in order of first meeting over
the shards taken in order (shards are contiguous runs of subtrees in walk order, so this is the one walk's
numbering), adds the shards' terminal values per sequence in shard order, and checks across shards what one
walk checks within itself: a set has one owner and one own sequence above it (perfect recall), and one action
count. Vectorized NumPy, nothing per history; the best-response pass then runs on the merged arrays.
"""

from __future__ import annotations

import numpy as np


def _first_met(ids: np.ndarray) -> np.ndarray:
    """`ids` without repeats, each at its first place."""
    _, where = np.unique(ids, return_index=True)
    return ids[np.sort(where)]


def merge(parts: list[dict], first: np.ndarray, codes: np.ndarray) -> tuple[dict, np.ndarray, np.ndarray]:
    """(the merged `SHARD_ARRAYS`, `OUT_FIELDS` values before the best-response pass, error) of the shards'
    results in shard order; `first` and `codes` are the policy's. ``error = (kind, code, a, b)`` as the walk's."""
    n, nseq = len(first) - 1, int(first[-1])
    error = np.zeros(4, np.int64)
    # the extra sets, numbered in order of first meeting over the shards
    extra_codes = np.concatenate([p["extra_code"] for p in parts])
    sizes = np.concatenate([np.diff(p["extra_first"]) for p in parts])
    unique, where, inverse = np.unique(extra_codes, return_index=True, return_inverse=True)
    by_meeting = np.argsort(where, kind="stable")
    rank = np.empty(len(unique), np.int64)
    rank[by_meeting] = np.arange(len(unique))
    global_id = n + rank[inverse.ravel()]
    code = extra_codes[where[by_meeting]]
    size = sizes[where[by_meeting]]
    wrong = np.flatnonzero(sizes != size[rank[inverse.ravel()]])
    if len(wrong):
        j = wrong[0]
        error[:] = 2, extra_codes[j], size[rank[inverse.ravel()[j]]], sizes[j]
    extra_first = np.concatenate(([0], np.cumsum(size))).astype(np.int64)
    tv = np.zeros(nseq + int(extra_first[-1]))
    above = np.full(n + len(code), -2, np.int64)
    owner = np.zeros(n + len(code), np.int8)
    orders = []
    out = np.zeros(8)
    start = 0
    for p in parts:
        extras = len(p["extra_code"])
        ids = global_id[start:start + extras]
        start += extras
        # where this shard's sequences and sets go
        set_id = np.concatenate((np.arange(n, dtype=np.int64), ids))
        local_first = p["extra_first"]
        of = np.repeat(np.arange(extras), np.diff(local_first))
        seq_id = nseq + extra_first[ids[of] - n] + np.arange(len(of)) - local_first[of]
        tv[:nseq] += p["tv"][:nseq]
        tv[seq_id] += p["tv"][nseq:nseq + len(of)]
        met = np.flatnonzero(p["above"] != -2)
        mine = p["above"][met]
        mine = np.where(mine >= nseq, seq_id[np.maximum(mine - nseq, 0)], mine) if len(of) else mine
        into = set_id[met]
        new = above[into] == -2
        seen = ~new
        for kind, clash in ((4, seen & (owner[into] != p["owner"][met])), (3, seen & (above[into] != mine))):
            if clash.any() and not error[0]:
                i = into[np.argmax(clash)]
                error[:] = kind, codes[i] if i < n else code[i - n], owner[i], p["owner"][met][np.argmax(clash)]
        above[into[new]] = mine[new]
        owner[into[new]] = p["owner"][met][new]
        orders.append(set_id[p["order"]])
        out[:3] += p["out"][:3]
        out[3] += p["out"][3]
        out[4] = max(out[4], p["out"][4])
    order = _first_met(np.concatenate(orders)) if orders else np.zeros(0, np.int64)
    out[5], out[6], out[7] = len(order), len(code), parts[0]["out"][7]
    merged = {"tv": tv, "above": above, "owner": owner, "order": order, "extra_first": extra_first,
              "extra_code": code}
    return merged, out, error
