"""Sequence features: every sequence (information set, action) of a compiled game as a float vector.

An extractor is a function ``extract(game, **params) -> Features``; `feature_matrix` computes a
game's matrix once and caches it on the game object, so solvers and sweeps share it. Rows follow
the global sequence order of `rcfr.tree.Game` (player 0's sequences first), so player p's rows are
``matrix[view.offset : view.offset + view.num_sequences - 1]``.

Register your own with `register_features(name, extract)`.
"""

from __future__ import annotations

import numpy as np

from . import generic, indicator  # noqa: E402  (registration side effects)
from .base import FEATURES, Features, feature_matrix, register_features

register_features("indicator", indicator.extract)
register_features("generic", generic.extract)

from . import encoders, goofspiel, latent_ttt, liars_dice, pam, poker  # noqa: E402

#: The games' own encoders (each also registers its dense features), by the rules they serve; the
#: first match is what ``make_features(game, "auto")`` picks.
GAME_ENCODERS = {"poker": poker, "goofspiel": goofspiel, "liars_dice": liars_dice, "latent_ttt": latent_ttt,
                 "pam": pam}
for _name, _module in GAME_ENCODERS.items():
    encoders.register_encoder(_name, _module.make)

__all__ = ["FEATURES", "Features", "feature_matrix", "register_features"]


def make_features(game, spec="auto", **params) -> Features:
    """The features of `game` from a name (with its `params`), ``{"name": ..., **params}``, a `Features`,
    or a (sequences x d) array. ``"auto"`` is the game's own encoder (`GAME_ENCODERS`: poker, goofspiel,
    liars_dice, latent_ttt, pam) where it has one, else ``"generic"``.
    Named features come from `feature_matrix` (computed once per game)."""
    if params and not isinstance(spec, str):
        raise ValueError(f"feature options {sorted(params)} go with a features name, not with {spec!r}")
    if isinstance(spec, Features):
        features = spec
    elif isinstance(spec, np.ndarray):
        if spec.ndim != 2:
            raise ValueError(f"a features array must be 2-D, one row per sequence of {game.name} "
                             f"({game.num_sequences} x d), got shape {spec.shape}")
        features = Features(np.asarray(spec, dtype=np.float64), tuple(f"x{i}" for i in range(spec.shape[1])))
    elif isinstance(spec, dict):
        params = dict(spec)
        if "name" not in params:
            raise ValueError(f"a features dict needs a 'name'; allowed: {', '.join(sorted(FEATURES))}")
        return feature_matrix(game, params.pop("name"), **params)
    elif spec == "auto":
        return feature_matrix(game, auto_features(game), **params)
    elif isinstance(spec, str):
        return feature_matrix(game, spec, **params)
    else:
        raise ValueError(f"features must be a name ({', '.join(['auto'] + sorted(FEATURES))}), a dict with "
                         f"'name', a Features object or an array; got {spec!r}")
    if features.matrix.shape[0] != game.num_sequences:
        raise ValueError(f"features have {features.matrix.shape[0]} rows; {game.name} has "
                         f"{game.num_sequences} sequences")
    return features


def auto_features(game) -> str:
    """The name of `game`'s own features: the first of `GAME_ENCODERS` that serves its rules, else "generic"."""
    for name, module in GAME_ENCODERS.items():
        if module.serves(game.rules):
            return name
    return "generic"


__all__ += ["GAME_ENCODERS", "auto_features", "make_features"]
