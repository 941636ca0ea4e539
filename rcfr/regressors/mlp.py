"""A PyTorch multilayer perceptron, trained until a held-out slice of its rows stops improving.

A fit runs up to ``epochs`` passes of Adam and stops once the monitored loss has not improved by ``tol``
for ``n_iter_no_change`` epochs (scikit-learn's ``MLPRegressor`` conventions): with ``early_stopping`` the
loss on a random ``validation_fraction`` of the rows, whose best weights are kept, otherwise the training
loss. A fixed 20 epochs per fit left the networks explaining a third of their targets' variance on the Deep
CFR family's Leduc fits (docs/neural.md); a stopping rule trains each fit as long as it helps, whatever the
data's size.
With ``warm_start`` each fit starts from the previous weights (RCFR refits on targets that change slowly);
the Deep CFR family starts every fit from fresh ones. Runs on the CPU by default, on ``threads`` threads
(one: small networks lose far more to thread hand-offs than they gain, docs/neural.md); ``device="auto"``
takes a GPU when present. Inputs are standardized with the statistics of the first fit (kept fixed so warm
starts stay valid); targets are scaled by their (weighted) root mean square at each fit, since average
regrets shrink like 1/sqrt(t). Each epoch is one full-batch step, or a pass of shuffled minibatches of
``batch_size`` rows. The loss is the weighted mean squared error with weights normalized over all rows, so
a minibatch whose rows all have weight zero (sequences a sampler never visited) adds nothing rather than
dividing by zero. `state_dict`/`load_state_dict` carry the weights, the optimizer and the RNG, so a solver
checkpoint resumes the same sequence of fits.
"""

from __future__ import annotations

import io
import json
from contextlib import contextmanager
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
        "early_stopping": ["boolean"],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "threads": [None, Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, hidden: tuple | list = (64, 64), epochs: int = 2000, learning_rate: float = 1e-2,
                 weight_decay: float = 0.0, device: str = "cpu", random_state: int | None = None,
                 warm_start: bool = True, batch_size: int | None = None, early_stopping: bool = True,
                 validation_fraction: float = 0.1, n_iter_no_change: int = 30, tol: float = 1e-4,
                 threads: int | None = 1):
        self.hidden = hidden
        self.epochs = epochs
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.device = device
        self.random_state = random_state
        self.warm_start = warm_start
        self.batch_size = batch_size
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.threads = threads

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
            if self.random_state is not None or not hasattr(self, "rng_"):  # a seeded cold fit repeats itself
                seed = self.random_state  # None: a fresh seed from NumPy's global RNG
                seed = check_random_state(None).randint(2 ** 31) if seed is None else seed
                self.seed_, self.rng_ = int(seed), np.random.default_rng(seed)
            # over the rows predicted, weighted or not; a column constant there keeps its scale (dividing by
            # ~0 sent any other row's input, and prediction, to ~1e8)
            std = X.std(0)
            self.mean_, self.scale_ = X.mean(0), np.where(std > 1e-8 * (1.0 + np.abs(X.mean(0))), std, 1.0)
            self._inputs = None
        with _threads(self.threads):
            if cold:
                self._build(X.shape[1])
            inputs = self._tensor(X)
            key = cache_key(X)  # kept only where it can serve a later predict (a writable X may change)
            self._inputs = (key, inputs) if key is not None else None
            self.y_scale_ = float(np.sqrt(np.mean(w * y ** 2))) or 1.0  # the weighted RMS of what is fit
            device = inputs.device
            target = torch.as_tensor(y / self.y_scale_, device=device)
            weight = torch.as_tensor(w, device=device)
            train, held = self._split(w)
            self._train(inputs, target, weight, torch.as_tensor(train, device=device),
                        None if held is None else torch.as_tensor(held, device=device))
        return self

    def _split(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Training rows and held-out rows (None without early stopping, or where either part would hold
        no weight: a tiny fit then stops on its training loss)."""
        n = len(w)
        if not self.early_stopping:
            return np.arange(n), None
        order = self.rng_.permutation(n)
        cut = int(round(self.validation_fraction * n))
        held, train = np.sort(order[:cut]), np.sort(order[cut:])
        if cut == 0 or cut == n or w[held].sum() <= 0 or w[train].sum() <= 0:
            return np.arange(n), None
        return train, held

    def _train(self, inputs, target, weight, train, held) -> None:
        """Adam epochs over `train` until the monitored loss (on `held` where given, else the epoch's
        training loss) has not improved by `tol` for `n_iter_no_change` epochs; with `held`, the weights of
        its best epoch are kept. Records `n_epochs_`, `loss_curve_` and, with `held`, `validation_scores_`
        (the weighted R^2 of the held-out rows per epoch) and `best_validation_score_`."""
        import torch
        n = len(train)
        size = n if self.batch_size is None else min(self.batch_size, n)
        self.loss_curve_, self.validation_scores_, self.best_validation_score_ = [], [], None
        if held is not None:
            w_held, y_held = weight[held], target[held]
            spread = float((w_held * (y_held - (w_held * y_held).sum() / w_held.sum()) ** 2).sum() / w_held.sum())
        best, stale, kept = np.inf, 0, None
        for _ in range(self.epochs):
            order = np.arange(n) if size == n else self.rng_.permutation(n)
            total = 0.0
            for start in range(0, n, size):
                rows = train[torch.as_tensor(order[start:start + size], device=train.device)]
                self.optimizer_.zero_grad()
                loss = (weight[rows] * (self.net_(inputs[rows]).squeeze(1) - target[rows]) ** 2).mean()
                loss.backward()
                self.optimizer_.step()
                total += loss.item() * len(rows)
            self.loss_curve_.append(total / n)
            monitored = total / n
            if held is not None:
                with torch.no_grad():
                    error = self.net_(inputs[held]).squeeze(1) - y_held
                    monitored = float((w_held * error ** 2).sum() / w_held.sum())
                self.validation_scores_.append(_r2(monitored, spread))
                if monitored < best:
                    kept = {k: v.clone() for k, v in self.net_.state_dict().items()}
            stale = stale + 1 if monitored > best - self.tol else 0
            best = min(best, monitored)
            if stale >= self.n_iter_no_change:
                break
        self.n_epochs_ = len(self.loss_curve_)
        if kept is not None:
            self.net_.load_state_dict(kept)
            self.best_validation_score_ = max(self.validation_scores_)

    def predict(self, X):
        import torch
        X = predict_input(self, X)
        with _threads(self.threads), torch.no_grad():
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
        for name in ("net_", "optimizer_", "rng_", "seed_", "mean_", "scale_", "y_scale_", "n_features_in_", "_inputs", "_checked",
                     "n_epochs_", "loss_curve_", "validation_scores_", "best_validation_score_"):
            self.__dict__.pop(name, None)
        if not state:
            return
        self.seed_ = int(state["seed"])
        self.rng_ = np.random.default_rng()
        self.rng_.bit_generator.state = json.loads(np.asarray(state["rng"], dtype=np.uint8).tobytes())
        self.n_features_in_ = int(state["width"])
        with _threads(self.threads):
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


@contextmanager
def _threads(n: int | None):
    """torch's intra-op threads set to `n` inside the block (None: left as they are)."""
    import torch
    before = torch.get_num_threads()
    if n is None or n == before:
        yield
        return
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _r2(loss: float, spread: float) -> float:
    """The share of the targets' weighted variance `spread` that a weighted mean squared error `loss`
    leaves explained (scikit-learn's convention for constant targets: 1 when exact, else 0)."""
    if spread > 0:
        return 1.0 - loss / spread
    return 1.0 if loss == 0 else 0.0


def _width(h) -> bool:
    """Whether `h` is a layer width: an integer >= 1 (not a bool)."""
    try:
        return check_int("hidden", h, 1) >= 1
    except ValueError:
        return False
