"""Errors and tolerances that more than one layer raises or checks: defined below all of them (the
policy files and the OpenSpiel adapter both read policies row by row)."""

#: How far a policy row's probabilities may sum from one.
ROW_TOLERANCE = 1e-6


class PolicyError(ValueError):
    """A policy file or dictionary that does not describe a valid policy of the game."""


class TooLarge(ValueError):
    """A game with more histories than the compile limit (`rcfr.budget`): refused before the work."""


class RulesPathWarning(UserWarning):
    """`rcfr.load_game` walks a game by its rules because it is too large to compile."""
