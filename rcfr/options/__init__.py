"""Every option word a solver takes, its allowed values and ranges, in one place.

The vocabulary (docs/architecture.md) as tuples, one ``check_*`` family that refuses a bad value before
any work with a message naming the field and what is allowed (the style of `rcfr.registry` and the
experiment kit), and one frozen options object per solver family, built by those checks. A solver keeps
its options object; ``state_dict()`` records it, so a checkpoint says whose it is. One job per module:
`checks` (the words and the check family), `objects` (what the options objects share, the full-width and
RCFR families' objects, keyword signatures), `sampled` (the sampled learners' objects).
"""

from __future__ import annotations

from .checks import *  # noqa: F403
from .checks import __all__ as _checks
from .objects import *  # noqa: F403
from .objects import __all__ as _objects
from .sampled import *  # noqa: F403
from .sampled import __all__ as _sampled

__all__ = _checks + _objects + _sampled
