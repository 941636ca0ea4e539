"""Search in stochastic perfect-information games (Lanctot's thesis, chapters 6 and 7): its own
small game protocol (`base.SearchGame`), games, exact Pig values, MCMS, MCTS and variance reduction."""
