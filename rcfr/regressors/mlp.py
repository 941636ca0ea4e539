"""A PyTorch multilayer perceptron that warm-starts each fit from the previous weights.

RCFR refits every iteration on targets that change slowly, so a few full-batch Adam steps from
the last solution are enough. Runs on the CPU by default; ``device="auto"`` takes a GPU when present.
Inputs are standardized with the statistics of the first fit (kept fixed so warm starts stay valid);
targets are scaled by their root mean square at each fit, since average regrets shrink like 1/sqrt(t).
Each epoch is one full-batch step, or a pass of shuffled minibatches of ``batch_size`` rows.
`state_dict`/`load_state_dict` carry the weights, the optimizer and the minibatch RNG, so a solver
checkpoint resumes the same sequence of fits.
"""

from __future__ import annotations

import io
import json

import numpy as np

from ..registry import check_choice
from .base import Regressor, cache_key


class MLP(Regressor):
    def __init__(self, hidden: tuple | list = (32, 32), epochs: int = 20, learning_rate: float = 1e-2,
                 weight_decay: float = 0.0, device: str = "cpu", seed: int = 0, warm_start: bool = True,
                 batch_size: int | None = None):
        import torch
        self.hidden = tuple(int(h) for h in hidden)
        if not self.hidden or min(self.hidden) < 1 or epochs < 1 or learning_rate <= 0:
            raise ValueError(f"MLP needs hidden sizes >= 1, epochs >= 1, learning_rate > 0; got "
                             f"{hidden!r}, {epochs!r}, {learning_rate!r}")
        check_choice("device", device, ["cpu", "cuda", "auto"])
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        if device == "cuda" and not torch.cuda.is_available():
            raise ValueError("device 'cuda' requested but no GPU is available; use 'cpu' or 'auto'")
        self.device = torch.device(device)
        self.epochs, self.learning_rate, self.weight_decay = int(epochs), float(learning_rate), float(weight_decay)
        self.seed, self.warm_start = int(seed), bool(warm_start)
        if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1):
            raise ValueError(f"batch_size must be None (full batch) or an integer >= 1, got {batch_size!r}")
        self.batch_size = batch_size
        self._rng = np.random.default_rng(seed)
        self.net = self.optimizer = None
        self._inputs = (None, None)
        self._y_scale = 1.0

    def _build(self, width: int) -> None:
        import torch
        torch.manual_seed(self.seed)
        layers, last = [], width
        for h in self.hidden:
            layers += [torch.nn.Linear(last, h), torch.nn.ReLU()]
            last = h
        layers.append(torch.nn.Linear(last, 1))
        self.net = torch.nn.Sequential(*layers).to(self.device, torch.float64)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=self.learning_rate,
                                          weight_decay=self.weight_decay)

    def _tensor(self, X):
        """X standardized as a tensor; remembered only for a read-only X (a writable one may change)."""
        import torch
        if self._inputs[0] is not X or X is None:
            X64 = np.asarray(X, dtype=np.float64)
            if self.net is None or not self.warm_start:
                self._mean, self._scale = X64.mean(0), X64.std(0) + 1e-8
            t = torch.as_tensor((X64 - self._mean) / self._scale, device=self.device)
            self._inputs = (cache_key(X), t)
        return self._inputs[1]

    def fit(self, X, y, sample_weight=None):
        import torch
        if self.net is None or not self.warm_start or self.net[0].in_features != X.shape[1]:
            self.net = None
            self._inputs = (None, None)
            inputs = self._tensor(X)
            self._build(X.shape[1])
        else:
            inputs = self._tensor(X)
        y = np.asarray(y, dtype=np.float64)
        self._y_scale = float(np.sqrt(np.mean(y ** 2))) or 1.0
        target = torch.as_tensor(y / self._y_scale, device=self.device)
        weight = (torch.ones_like(target) if sample_weight is None
                  else torch.as_tensor(np.asarray(sample_weight, dtype=np.float64), device=self.device))
        weight = weight / weight.sum()
        n = len(target)
        size = n if self.batch_size is None else min(self.batch_size, n)
        for _ in range(self.epochs):
            order = np.arange(n) if size == n else self._rng.permutation(n)
            for start in range(0, n, size):
                rows = torch.as_tensor(order[start:start + size], device=self.device)
                w = weight[rows]
                self.optimizer.zero_grad()
                loss = (w * (self.net(inputs[rows]).squeeze(1) - target[rows]) ** 2).sum() / w.sum()
                loss.backward()
                self.optimizer.step()
        return self

    def predict(self, X):
        import torch
        with torch.no_grad():
            return self.net(self._tensor(X)).squeeze(1).cpu().numpy() * self._y_scale

    def complexity(self) -> int:
        return 0 if self.net is None else int(sum(p.numel() for p in self.net.parameters()))

    def state_dict(self) -> dict[str, np.ndarray]:
        """Everything a later fit depends on, as arrays: weights and optimizer (torch.save bytes),
        input statistics, target scale and the minibatch RNG (JSON bytes)."""
        import torch
        rng = np.frombuffer(json.dumps(self._rng.bit_generator.state).encode(), dtype=np.uint8).copy()
        if self.net is None:
            return {"rng": rng}
        buffer = io.BytesIO()
        torch.save({"net": self.net.state_dict(), "optimizer": self.optimizer.state_dict()}, buffer)
        return {"rng": rng, "torch": np.frombuffer(buffer.getvalue(), dtype=np.uint8).copy(),
                "width": np.array(self.net[0].in_features), "mean": self._mean.copy(),
                "scale": self._scale.copy(), "y_scale": np.array(self._y_scale)}

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        import torch
        self._rng.bit_generator.state = json.loads(np.asarray(state["rng"], dtype=np.uint8).tobytes())
        self._inputs = (None, None)
        if "torch" not in state:
            self.net = self.optimizer = None
            return
        self._build(int(state["width"]))
        saved = torch.load(io.BytesIO(np.asarray(state["torch"], dtype=np.uint8).tobytes()),
                           map_location=self.device, weights_only=True)
        self.net.load_state_dict(saved["net"])
        self.optimizer.load_state_dict(saved["optimizer"])
        self._mean, self._scale = np.array(state["mean"], dtype=np.float64), np.array(state["scale"], dtype=np.float64)
        self._y_scale = float(state["y_scale"])
