"""Where the walks get game states from: the accessors of a *state source*, implemented by the compiled tree.

The walks (`outcome_walks`, `tree_walks`, `chance_walks`) never index the history arrays themselves; they
ask the source, through these functions, for a state's mover, its moves, a move's child, a chance node's
outcome probabilities, a decision's information set and a terminal's payoff. A state is an integer
*handle*: for the compiled tree (`bundles.Tree`, overloaded here) the history id. The second source,
`rcfr.sampling.rules_source.Rules` (the rules' `FastGame` functions), overloads the same functions in its own module,
its handles being rows of a state buffer (``child`` gets the walk's ``slot`` for the child, a row that holds
no unfinished state: a depth-first walk has one unfinished state per (depth, child index), see
`bundles.Scratch`); every walk runs on both unchanged (docs/mccfr.md, "Kernel structure").

Information sets are numbered by the source too (the compiled tree's ids; the rules source numbers them as
first met); where a set keeps its regrets is the solver's layout (`bundles.Tree.first_seq`, `abstract`),
not the source's.
"""

from __future__ import annotations

import inspect

from numba import njit
from numba.core import types
from numba.extending import overload

from .bundles import Tree

ROOT = 0  # the handle of the compiled tree's root


def is_compiled_tree(source) -> bool:
    """True for the numba type of a `bundles.Tree` (the compiled tree as a state source)."""
    return isinstance(source, (types.NamedTuple, types.NamedUniTuple)) and source.instance_class is Tree


def implements(accessor, of, inline: str):
    """Register the decorated function as `accessor`'s implementation for the sources whose numba type `of`
    is true of: numba chooses at typing time (`overload`), no branch at run time. The typing function takes
    the implementation's signature, as numba requires, and answers None for any other source."""
    def register(implementation):
        def typing(source, *args):
            return implementation if of(source) else None
        typing.__signature__ = inspect.signature(implementation)
        overload(accessor, inline=inline)(typing)
        return implementation
    return register


def mover(source, h):
    """The player to move at state h: 0, 1, `CHANCE` or `TERMINAL`."""


def num_moves(source, h):
    """How many actions (or chance outcomes) state h has."""


def child(source, h, k, slot):
    """The state after move k of h; `slot` is the row of the walk's scratch that holds it (unused by the
    compiled tree, whose children are histories already)."""


def outcome_probs(source, h):
    """``(probs, start)``: chance node h's outcome probabilities are probs[start:start + num_moves]."""


def infoset(source, h):
    """The information set of decision h."""


def payoff(source, h):
    """Player 0's payoff at terminal h."""


def edge_slot(source, h, k, slot, J):
    """Where the baseline of edge (h, move k) lives in a traverser's row of ``State.baseline`` (-1: none). The
    compiled tree reads its layout (`bundles.Tree.baseline_index` of the child: per child history for
    VR-MCCFR, per (set, action) for MCCFRb); the rules give the (set, action) slot ``first_seq[J] + k`` of
    decision h's set J (J < 0 at chance: none)."""


def room(source):
    """Whether the source can take another iteration: a source that numbers information sets as it meets
    them (the rules, `rcfr.sampling.rules_source`) says no once its arrays are half used, and the driver returns so
    they can grow. The compiled tree knows every set: always."""


#: the compiled tree's accessors (`bundles.Tree`: handles are history ids), inlined into the walks
TREE_ACCESSORS = (
    (mover, lambda source, h: source.player[h]),
    (num_moves, lambda source, h: source.num_children[h]),
    (child, lambda source, h, k, slot: source.first_child[h] + k),
    (outcome_probs, lambda source, h: (source.chance_prob, source.first_child[h])),
    (infoset, lambda source, h: source.infoset[h]),
    (payoff, lambda source, h: source.utility[h]),
    (edge_slot, lambda source, h, k, slot, J: source.baseline_index[source.first_child[h] + k]),
    (room, lambda source: True),
)
for _accessor, _implementation in TREE_ACCESSORS:
    implements(_accessor, is_compiled_tree, "always")(_implementation)


@njit(cache=True, inline="always")
def regret_set(tree, I):
    """The set J whose regrets full information set I uses: ``tree.abstract[I]`` under an abstraction
    (merged sets share one regret vector), I itself where the map is empty."""
    abstract = tree.abstract
    return abstract[I] if abstract.shape[0] > 0 else I
