"""The information-set map now lives beside the compiled game, in `rcfr.tree.abstraction` (the solvers take
one, and the abstraction package builds on the solvers); this name stays for old imports."""

from ..tree.abstraction import Abstraction, LocalMap, identity  # noqa: F401
