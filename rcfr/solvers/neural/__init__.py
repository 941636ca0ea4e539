"""The Deep CFR family (Deep CFR, Single Deep CFR, DREAM, ESCHER) as configurations of one sampled loop."""

from .solver import DREAM, ESCHER, DeepCFR, NeuralCFR, SingleDeepCFR, history_features
from .walks import history_values

__all__ = ["DREAM", "DeepCFR", "ESCHER", "NeuralCFR", "SingleDeepCFR", "history_features", "history_values"]
