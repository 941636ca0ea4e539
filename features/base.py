"""The feature registry and the `Features` matrix type, below every extractor (they import it from here)."""

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
        if not isinstance(self.matrix, np.ndarray) or self.matrix.ndim != 2:
            raise ValueError(f"a feature matrix must be a 2-D array (sequences x features), got "
                             f"{type(self.matrix).__name__} of shape {np.shape(self.matrix)}")
        if self.matrix.shape[1] != len(self.names):
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
