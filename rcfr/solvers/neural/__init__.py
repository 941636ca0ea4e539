"""The Deep CFR family (Deep CFR, Single Deep CFR, DREAM, ESCHER) as configurations of one sampled loop."""

from .family import DREAM, ESCHER, DeepCFR, SingleDeepCFR
from .solver import NeuralCFR, history_features
from .walks import history_values

__all__ = ["DREAM", "DeepCFR", "ESCHER", "NeuralCFR", "SingleDeepCFR", "history_features", "history_values"]
