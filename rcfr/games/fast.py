"""The fast-path protocol: a game described by numba functions over fixed-width integer states.

`rcfr.compiler` enumerates such a game into exactly the arrays its rule object gives (docs/compiler.md).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from numba import njit
from numba import types as nb

#: The game's data: an int64 and a float64 array of parameters and tables.
DATA = nb.Tuple((nb.int64[::1], nb.float64[::1]))
STATE = nb.int64[::1]
#: The signature of each function of a `FastGame`.
SIGNATURES = {
    "initial": nb.void(DATA, STATE),
    "player": nb.int64(DATA, STATE),
    "num_children": nb.int64(DATA, STATE),
    "child": nb.float64(DATA, STATE, nb.int64, STATE),
    "utility": nb.float64(DATA, STATE),
    "infoset_code": nb.int64(DATA, STATE),
}
#: The signature of an information-set abstraction's ``code(data, state, out)`` over a game's states: out[0] the
#: abstract code (in [0, 2^62)), out[1] a signature of the legal actions (equal exactly when the actions are).
ABSTRACT_CODE = nb.void(DATA, STATE, nb.int64[::1])


def fast_function(role: str):
    """Decorator for a game's function in `role` (a key of `SIGNATURES`): ``@njit(cache=True)``, compiled
    for that signature when first compiled into a game (not at import), and cached on disk.

    The driver receives the functions as typed function pointers, so that it too is compiled once
    and cached, whichever game it runs."""
    if role not in SIGNATURES:
        raise ValueError(f"unknown fast-function role {role!r}; allowed: {', '.join(SIGNATURES)}")
    return njit(cache=True)


class FastGame(NamedTuple):
    """A game's states as ``width`` int64 words, and numba functions over them, each compiled with
    ``@fast_function(role)``.

    Every function receives ``data`` first: the game's parameters and tables as a tuple
    ``(int64 array, float64 array)``. States are 1-D int64 arrays of length ``width``.

    * ``initial(data, out)``: write the root state into ``out``.
    * ``player(data, s)``: 0, 1, ``CHANCE`` or ``TERMINAL``.
    * ``num_children(data, s)``: the number of legal actions or chance outcomes (0 at a terminal).
    * ``child(data, s, k, out)``: write the state after action (or outcome) ``k`` into ``out``;
      return the outcome's probability at a chance node, 1.0 after an action.
    * ``utility(data, s)``: player 0's payoff at a terminal.
    * ``infoset_code(data, s)``: an integer in ``[0, code_space)`` that is equal for two decision
      states exactly when the rules' ``infoset_key`` is.

    Readable names (information-set keys, action and outcome names) still come from the rule
    object, replayed on demand along a history's path, so the two descriptions must agree move for
    move: `tests/test_compiler.py` checks that both paths give identical arrays and keys.

    ``max_infosets`` (0: not declared) bounds the information sets: a walk that
    meets them all in one iteration (chance-sampled CFR without chance) sizes its index by it up front.
    """

    width: int
    data: Any
    code_space: int
    initial: Any
    player: Any
    num_children: Any
    child: Any
    utility: Any
    infoset_code: Any
    max_infosets: int = 0


#: The function-pointer type of each role, as the driver receives them.
FUNCTION_TYPES = {role: nb.FunctionType(sig) for role, sig in SIGNATURES.items()}
