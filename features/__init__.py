"""Sequence features: every sequence (information set, action) of a compiled game as a float vector.

An extractor is a function ``extract(game, **params) -> Features``; `feature_matrix` computes a
game's matrix once and caches it on the game object, so solvers and sweeps share it. Rows follow
the global sequence order of `rcfr.tree.Game` (player 0's sequences first), so player p's rows are
``matrix[view.offset : view.offset + view.num_sequences - 1]``.

Register your own with `register_features(name, extract)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from rcfr.registry import check_choice, keyword_names


@dataclass(frozen=True)
class Features:
    """A (sequences x features) float64 matrix with one name per column."""

    matrix: np.ndarray
    names: tuple[str, ...]

    def __post_init__(self):
        if self.matrix.ndim != 2 or self.matrix.shape[1] != len(self.names):
            raise ValueError(f"feature matrix of shape {self.matrix.shape} needs {self.matrix.shape[1:]} "
                             f"names, got {len(self.names)}")

    @property
    def num_features(self) -> int:
        return self.matrix.shape[1]

    def player_rows(self, game, player: int) -> np.ndarray:
        """Player `player`'s rows, in its local sequence order (local id 1 + j is row j)."""
        view = game.views[player]
        return self.matrix[view.offset:view.offset + view.num_sequences - 1]


FEATURES: dict[str, Callable] = {}


def register_features(name: str, extract: Callable) -> None:
    """Make `feature_matrix(game, name, **params)` call ``extract(game, **params) -> Features``."""
    if not callable(extract):
        raise TypeError(f"a feature extractor must be callable, got {extract!r}")
    FEATURES[name] = extract


def feature_matrix(game, name: str = "generic", **params) -> Features:
    """The `name` features of `game`, computed once per (game, name, params) and cached on the game."""
    extract = FEATURES[check_choice("features", name, sorted(FEATURES))]
    unknown = sorted(set(params) - set(keyword_names(extract)[1:]))
    if unknown:
        raise ValueError(f"unknown option(s) {', '.join(map(repr, unknown))} for features {name!r}; "
                         f"allowed: {', '.join(keyword_names(extract)[1:]) or 'none'}")
    cache = game.__dict__.setdefault("_feature_cache", {})
    key = (name, tuple(sorted(params.items())))
    if key not in cache:
        features = extract(game, **params)
        if features.matrix.shape[0] != game.num_sequences:
            raise ValueError(f"features {name!r} gave {features.matrix.shape[0]} rows for "
                             f"{game.num_sequences} sequences")
        features.matrix.setflags(write=False)
        cache[key] = features
    return cache[key]


from . import generic, indicator, poker  # noqa: E402  (registration side effects)

register_features("indicator", indicator.extract)
register_features("generic", generic.extract)
register_features("poker", poker.extract)

from . import encoders, goofspiel  # noqa: E402

encoders.register_encoder("goofspiel", goofspiel.make)

__all__ = ["FEATURES", "Features", "feature_matrix", "register_features"]


def make_features(game, spec="auto", **params) -> Features:
    """The features of `game` from a name (with its `params`), ``{"name": ..., **params}``, a `Features`,
    or a (sequences x d) array. ``"auto"`` is ``"poker"`` for poker rules and ``"generic"`` otherwise.
    Named features come from `feature_matrix` (computed once per game)."""
    if params and not isinstance(spec, str):
        raise ValueError(f"feature options {sorted(params)} go with a features name, not with {spec!r}")
    if isinstance(spec, Features):
        features = spec
    elif isinstance(spec, np.ndarray):
        features = Features(np.asarray(spec, dtype=np.float64), tuple(f"x{i}" for i in range(spec.shape[1])))
    elif isinstance(spec, dict):
        params = dict(spec)
        if "name" not in params:
            raise ValueError(f"a features dict needs a 'name'; allowed: {', '.join(sorted(FEATURES))}")
        return feature_matrix(game, params.pop("name"), **params)
    elif spec == "auto":
        from rcfr.games.poker import LimitPoker, NoLimitOneCardPoker
        poker = isinstance(game.rules, (LimitPoker, NoLimitOneCardPoker))
        return feature_matrix(game, "poker" if poker else "generic", **params)
    elif isinstance(spec, str):
        return feature_matrix(game, spec, **params)
    else:
        raise ValueError(f"features must be a name ({', '.join(['auto'] + sorted(FEATURES))}), a dict with "
                         f"'name', a Features object or an array; got {spec!r}")
    if features.matrix.shape[0] != game.num_sequences:
        raise ValueError(f"features have {features.matrix.shape[0]} rows; {game.name} has "
                         f"{game.num_sequences} sequences")
    return features


__all__ += ["make_features"]
