"""Errors and tolerances that more than one layer raises or checks: defined below all of them (the
policy files and the OpenSpiel adapter both read policies row by row)."""

#: How far a policy row's probabilities may sum from one.
ROW_TOLERANCE = 1e-6


class PolicyError(ValueError):
    """A policy file or dictionary that does not describe a valid policy of the game."""


class TooLarge(ValueError):
    """A game too large for the request (to compile within the limit, or to walk exactly before the heat death
    of the machine: `rcfr.budget`): refused before the work."""


class LongWalkWarning(UserWarning):
    """An exact walk of a game's rules estimated to take minutes or more, said before it starts (`rcfr.budget`)."""


class RulesPathWarning(UserWarning):
    """`rcfr.load_game` walks a game by its rules because it is too large to compile."""
