"""Games walked through their rules (`FastGame` functions), without the compiled tree.

A compiled game stores every history (~50 bytes each), which caps it near 3e8 histories. Walking the
rules instead keeps memory proportional to the information sets met: the sampling solvers index sets
as they meet them, exact evaluation walks the game depth first, and policies are keyed by each set's
`infoset_code`.
"""
