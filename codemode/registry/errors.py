"""Errors raised to the *host* programmer; a model never sees these.

    CodemodeError
    ├── ToolDefinitionError   a definition is wrong; lists every problem at once
    ├── RegistrationError     duplicate or reserved name, scope clash
    └── PluginLoadError       a plugin cannot be found, imported or applied

Failures while a tool *runs* are never raised: ``Registry.execute`` turns them into error results.
"""

from __future__ import annotations

__all__ = ["CodemodeError", "PluginLoadError", "RegistrationError", "ToolDefinitionError"]


class CodemodeError(Exception):
    """Base of the errors the host code must fix."""


class ToolDefinitionError(CodemodeError, ValueError):
    """A tool definition is invalid. ``problems`` lists every one, so one fix round is enough."""

    def __init__(self, name: str, problems: list[str]) -> None:
        self.name = name
        self.problems = list(problems)
        lines = "\n".join(f"- {p}" for p in self.problems)
        super().__init__(f"invalid tool definition {name!r}:\n{lines}")


class RegistrationError(CodemodeError, ValueError):
    """A tool cannot be registered under this name here."""


class PluginLoadError(CodemodeError, ImportError):
    """A plugin spec did not resolve to a module with a callable ``apply(registry)``."""
