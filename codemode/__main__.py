"""``python -m codemode ...``: the ``codemode`` command, for where the script is not on ``PATH``."""

from .cli import script

script()
