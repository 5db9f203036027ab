"""``python -m codemode.mcp serve ...``: ``codemode mcp serve`` before the main CLI wires it."""

from .cli import main

raise SystemExit(main())
