"""``python -m codemode.mcp serve ...``: ``codemode mcp serve``, for clients that cannot find the script."""

from ..cli.mcp import main

raise SystemExit(main())
