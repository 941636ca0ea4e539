"""A PyTorch multilayer perceptron that warm-starts each fit from the previous weights.

RCFR refits every iteration on targets that change slowly, so a few full-batch Adam steps from
the last solution are enough. Runs on the CPU by default; ``device="auto"`` takes a GPU when present.
Inputs are standardized with the statistics of the first fit (kept fixed so warm starts stay valid);
targets are scaled by their (weighted) root mean square at each fit, since average regrets shrink like 1/sqrt(t).
Each epoch is one full-batch step, or a pass of shuffled minibatches of ``batch_size`` rows. The loss
is the weighted mean squared error with weights normalized over all rows, so a minibatch whose rows
all have weight zero (sequences a sampler never visited) adds nothing rather than dividing by zero.
`state_dict`/`load_state_dict` carry the weights, the optimizer and the minibatch RNG, so a solver
checkpoint resumes the same sequence of fits.
"""

from __future__ import annotations

import io
import json
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..options import check_int
from .base import cache_key, fit_inputs, predict_input


class MLP(RegressorMixin, BaseEstimator):
    """Fully connected ReLU network (float64) trained by Adam on the weighted squared error."""

    _parameter_constraints = {
        "hidden": ["array-like"],
        "epochs": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "weight_decay": [Interval(Real, 0, None, closed="left")],
        "device": [StrOptions({"cpu", "cuda", "auto"})],
        "random_state": [None, Interval(Integral, 0, None, closed="left")],
        "warm_start": ["boolean"],
        "batch_size": [None, Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, hidden: tuple | list = (32, 32), epochs: int = 20, learning_rate: float = 1e-2,
                 weight_decay: float = 0.0, device: str = "cpu", random_state: int | None = None,
                 warm_start: bool = True, batch_size: int | None = None):
        self.hidden = hidden
        self.epochs = epochs
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.device = device
        self.random_state = random_state
        self.warm_start = warm_start
        self.batch_size = batch_size

    def _validate_params(self) -> None:
        super()._validate_params()
        self._widths()

    def _widths(self) -> tuple[int, ...]:
        widths = tuple(self.hidden)
        if not widths or not all(_width(h) for h in widths):
            raise ValueError(f"The 'hidden' parameter of MLP must be a non-empty list of integers >= 1 "
                             f"(units per hidden layer). Got {self.hidden!r} instead.")
        return tuple(int(h) for h in widths)

    def _device(self):
        import torch
        if self.device == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        if self.device == "cuda" and not torch.cuda.is_available():
            raise ValueError("The 'device' parameter of MLP is 'cuda' but no GPU is available; use 'cpu' or 'auto'")
        return torch.device(self.device)

    def _build(self, width: int) -> None:
        """A fresh network and optimizer, initialized from `seed_` without touching torch's global RNG."""
        import torch
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed_)
            layers, last = [], width
            for h in self._widths():
                layers += [torch.nn.Linear(last, h), torch.nn.ReLU()]
                last = h
            layers.append(torch.nn.Linear(last, 1))
            self.net_ = torch.nn.Sequential(*layers).to(self._device(), torch.float64)
        self.optimizer_ = torch.optim.Adam(self.net_.parameters(), lr=self.learning_rate,
                                           weight_decay=self.weight_decay)

    def _tensor(self, X):
        """X standardized as a tensor; kept from fit for a read-only X (a writable one may change)."""
        import torch
        cached = getattr(self, "_inputs", None)
        if cached is not None and cached[0] is X and X is not None:
            return cached[1]
        return torch.as_tensor((X - self.mean_) / self.scale_, device=self.net_[0].weight.device)

    def fit(self, X, y, sample_weight=None):
        import torch
        X, y, w = fit_inputs(self, X, y, sample_weight)
        w = w * (len(w) / w.sum())  # mean 1: each row's share of the full loss (the sum is > 0: checked)
        cold = (not self.warm_start or not hasattr(self, "net_") or self.n_features_in_ != self.net_[0].in_features)
        if cold:
            if not hasattr(self, "rng_"):
                seed = self.random_state  # None: a fresh seed from NumPy's global RNG
                seed = check_random_state(None).randint(2 ** 31) if seed is None else seed
                self.seed_, self.rng_ = int(seed), np.random.default_rng(seed)
            # over the rows predicted, weighted or not; a column constant there keeps its scale (dividing by
            # ~0 sent any other row's input, and prediction, to ~1e8)
            std = X.std(0)
            self.mean_, self.scale_ = X.mean(0), np.where(std > 1e-8 * (1.0 + np.abs(X.mean(0))), std, 1.0)
            self._inputs = None
            self._build(X.shape[1])
        inputs = self._tensor(X)
        key = cache_key(X)  # kept only where it can serve a later predict (a writable X may change)
        self._inputs = (key, inputs) if key is not None else None
        self.y_scale_ = float(np.sqrt(np.mean(w * y ** 2))) or 1.0  # the weighted RMS of what is fit
        device = inputs.device
        target = torch.as_tensor(y / self.y_scale_, device=device)
        weight = torch.as_tensor(w, device=device)
        n = len(target)
        size = n if self.batch_size is None else min(self.batch_size, n)
        for _ in range(self.epochs):
            order = np.arange(n) if size == n else self.rng_.permutation(n)
            for start in range(0, n, size):
                rows = torch.as_tensor(order[start:start + size], device=device)
                self.optimizer_.zero_grad()
                loss = (weight[rows] * (self.net_(inputs[rows]).squeeze(1) - target[rows]) ** 2).mean()
                loss.backward()
                self.optimizer_.step()
        return self

    def predict(self, X):
        import torch
        X = predict_input(self, X)
        with torch.no_grad():
            return self.net_(self._tensor(X)).squeeze(1).cpu().numpy() * self.y_scale_

    def size(self) -> int:
        """Parameters (weights and biases)."""
        check_is_fitted(self)
        return int(sum(p.numel() for p in self.net_.parameters()))

    def state_dict(self) -> dict[str, np.ndarray]:
        """Everything a later fit depends on, as arrays: weights and optimizer (torch.save bytes), input
        statistics, target scale, the initialization seed and the minibatch RNG (JSON bytes); empty
        before the first fit."""
        import torch
        if not hasattr(self, "net_"):
            return {}
        rng = np.frombuffer(json.dumps(self.rng_.bit_generator.state).encode(), dtype=np.uint8).copy()
        buffer = io.BytesIO()
        torch.save({"net": self.net_.state_dict(), "optimizer": self.optimizer_.state_dict()}, buffer)
        return {"rng": rng, "seed": np.array(self.seed_), "torch": np.frombuffer(buffer.getvalue(), dtype=np.uint8).copy(),
                "width": np.array(self.n_features_in_), "mean": self.mean_.copy(),
                "scale": self.scale_.copy(), "y_scale": np.array(self.y_scale_)}

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        import torch
        for name in ("net_", "optimizer_", "rng_", "seed_", "mean_", "scale_", "y_scale_", "n_features_in_", "_inputs", "_checked"):
            self.__dict__.pop(name, None)
        if not state:
            return
        self.seed_ = int(state["seed"])
        self.rng_ = np.random.default_rng()
        self.rng_.bit_generator.state = json.loads(np.asarray(state["rng"], dtype=np.uint8).tobytes())
        self.n_features_in_ = int(state["width"])
        self._build(self.n_features_in_)
        saved = torch.load(io.BytesIO(np.asarray(state["torch"], dtype=np.uint8).tobytes()),
                           map_location=self.net_[0].weight.device, weights_only=True)
        self.net_.load_state_dict(saved["net"])
        self.optimizer_.load_state_dict(saved["optimizer"])
        self.mean_ = np.array(state["mean"], dtype=np.float64)
        self.scale_ = np.array(state["scale"], dtype=np.float64)
        self.y_scale_ = float(state["y_scale"])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True  # a few warm-started epochs per fit, not a converged fit
        return tags


def _width(h) -> bool:
    """Whether `h` is a layer width: an integer >= 1 (not a bool)."""
    try:
        return check_int("hidden", h, 1) >= 1
    except ValueError:
        return False
