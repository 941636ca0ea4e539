"""What every solver shares: iteration counting, `run` with progress and callbacks."""

from __future__ import annotations

from typing import Callable

import numpy as np


def _check_count(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


class IterativeSolver:
    """Subclasses implement `_advance(n)`: run n iterations and add n to `self.iteration`."""

    iteration: int = 0
    #: iterations per `_advance` call when no callback needs control back sooner
    chunk: int = 16

    def _advance(self, iterations: int) -> None:
        raise NotImplementedError

    def iterate(self) -> None:
        """One iteration."""
        self._advance(1)

    def run(self, iterations: int, *, progress: bool = False,
            callback: Callable[["IterativeSolver"], object] | None = None, every: int = 1):
        """Run `iterations` more iterations; call `callback(self)` whenever the iteration count is a
        multiple of `every`. Shows a progress bar when `progress` is true."""
        from tqdm.auto import tqdm
        left = _check_count("iterations", iterations, 0)
        every = _check_count("every", every, 1)
        with tqdm(total=left, disable=not progress, desc=type(self).__name__, unit="it") as bar:
            while left:
                step = min(left, self.chunk)
                if callback is not None:
                    step = min(step, every - self.iteration % every)
                self._advance(step)
                left -= step
                bar.update(step)
                if callback is not None and self.iteration % every == 0:
                    callback(self)
        return self
