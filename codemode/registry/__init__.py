"""The tool registry and its pipeline: how a tool is defined, found, run, checked and logged.

Every tool call, from a model or from a snippet, takes ``pipeline.run_call`` (DESIGN invariant 2).
The modules depend only on each other and on the standard library, ``jsonschema`` and
``anyio``; nothing here knows Code Mode, the CLI or MCP. The public names are re-exported by
``codemode`` itself; this package exports nothing of its own.
"""
