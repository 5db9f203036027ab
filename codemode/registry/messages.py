"""Every sentence a model reads about a failed call from the pipeline, in one place.

Each text says what happened and, where the model can act, what to do next. Tests pin these
strings; change them here or nowhere. ``ErrorKind`` values go into ``ToolResult.meta["error"]`` so
code can branch without parsing text.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["ErrorKind"]


class ErrorKind(StrEnum):
    """Why a result is an error; stored in ``ToolResult.meta["error"]``."""

    UNKNOWN_TOOL = "unknown_tool"
    INVALID_ARGUMENTS = "invalid_arguments"
    DENIED = "denied"
    TOOL_ERROR = "tool_error"
    TIMEOUT = "timeout"
    INVALID_OUTPUT = "invalid_output"
    BLOCKED = "blocked"
    CANCELLED = "cancelled"
    RUN_FAILED = "run_failed"


UNKNOWN_TOOL = "Unknown tool '{name}'. Available tools: {available}."
NO_TOOLS = "(none)"
INVALID_ARGUMENTS = "Invalid arguments for {name}:\n{violations}\nFix them and call {name} again."
ARGUMENTS_NOT_OBJECT = "arguments must be a JSON object, got {type}"
NOT_JSON = "{what} is not JSON: {detail}"
DENIED = "Call to {name} was denied: {reason}"
NO_APPROVAL_SERVICE = "approval required ({reason}) but no approval service is registered"
APPROVAL_REFUSED = "approval refused ({reason})"
APPROVAL_FAILED = "approval service failed: {error}"
HOOK_FAILED = "{hook} hook failed: {error}"
HOOK_RETURNED = "{hook} hook returned {got}, expected {expected}"
TOOL_FAILED = "{name} failed: {error}"
TIMED_OUT = "{name} timed out before it finished."
INVALID_OUTPUT = "{name} returned an invalid result: {detail}"
INVALID_CONTENT = "{name} produced invalid content: {detail}"
BLOCKED = "Result of {name} was blocked: {feedback}"
CANCELLED = "Call to {name} was cancelled."
NO_OUTPUT = "(no output)"
#: The text that stands in for a non-text content block inside a run (``content.placeholder``).
PLACEHOLDER_MEDIA = "[{type}: {mime_type}, {size} bytes]"
PLACEHOLDER_RESOURCE = "[resource: {uri}]"
