"""codemode: the tool registry, the dispatch pipeline, the Code Mode bridge and workspace tools.

Dependencies point one way: ``codemode`` may import ``sandbox`` and ``sdk_gen``; they never import
``codemode``. Inside, the rooms are ``registry/`` (tools and the pipeline), ``code_mode/``
(``run_code``), ``workspace``, ``mcp/``, ``integrations/`` and ``cli/`` (nothing imports it). The
public API is what ``__all__`` lists, re-exported here from one-concept modules with
``__module__`` set to ``codemode`` so tracebacks and reprs name the public path. See README.md.
"""

from .code_mode.agent import CallOutcome, CodeMode, extract_code_blocks
from .code_mode.bridge import RUN_CODE, CodeRun, StopRun, SubCall, render_run
from .code_mode.sessions import CodeSession
from .registry.calls import ExecutionContext, ExecutionToken, ToolCall, ToolResult
from .registry.content import check_content, image_block, render_value, text_block
from .registry.definition import ToolDefinition, compile_parameters, define_tool, tool
from .registry.errors import CodemodeError, PluginLoadError, RegistrationError, ToolDefinitionError
from .registry.events import (
    EVENT_CODE_DISPATCH,
    EVENT_CODE_DISPATCH_START,
    EVENT_MESSAGE,
    EVENT_SESSION_CLOSE,
    EVENT_SESSION_RESET,
    EVENT_SESSION_START,
    EVENT_TOOL_CALL,
    EVENT_TOOL_RESULT,
    EventLog,
    JsonlEventLog,
    MemoryEventLog,
    derive_messages,
)
from .registry.export import to_anthropic, to_json_schema, to_mcp, to_openai, to_openai_responses
from .registry.frozen import FrozenDict, FrozenList, NotJSONError, freeze, thaw
from .registry.hooks import (
    Decision,
    Handle,
    PostDecision,
    accept,
    allow,
    ask,
    block,
    deny,
    replace_content,
    replace_value,
)
from .registry.messages import ErrorKind
from .registry.plugins import load_plugin
from .registry.presentation import diff_card, generic_card, terminal_card
from .registry.registry import RESERVED_NAMES, AgentScope, Registry
from .workspace import (
    DEFAULT_WRITE_POLICY,
    WorkspaceError,
    WritePolicy,
    register_workspace,
    workspace_tools,
)

__all__ = [
    "DEFAULT_WRITE_POLICY",
    "EVENT_CODE_DISPATCH",
    "EVENT_CODE_DISPATCH_START",
    "EVENT_MESSAGE",
    "EVENT_SESSION_CLOSE",
    "EVENT_SESSION_RESET",
    "EVENT_SESSION_START",
    "EVENT_TOOL_CALL",
    "EVENT_TOOL_RESULT",
    "RESERVED_NAMES",
    "RUN_CODE",
    "AgentScope",
    "CallOutcome",
    "CodeMode",
    "CodeRun",
    "CodeSession",
    "CodemodeError",
    "Decision",
    "ErrorKind",
    "EventLog",
    "ExecutionContext",
    "ExecutionToken",
    "FrozenDict",
    "FrozenList",
    "Handle",
    "JsonlEventLog",
    "MemoryEventLog",
    "NotJSONError",
    "PluginLoadError",
    "PostDecision",
    "Registry",
    "RegistrationError",
    "StopRun",
    "SubCall",
    "ToolCall",
    "ToolDefinition",
    "ToolDefinitionError",
    "ToolResult",
    "WorkspaceError",
    "accept",
    "allow",
    "ask",
    "block",
    "check_content",
    "compile_parameters",
    "define_tool",
    "deny",
    "derive_messages",
    "diff_card",
    "extract_code_blocks",
    "freeze",
    "generic_card",
    "image_block",
    "load_plugin",
    "register_workspace",
    "render_run",
    "render_value",
    "replace_content",
    "replace_value",
    "terminal_card",
    "text_block",
    "thaw",
    "to_anthropic",
    "to_json_schema",
    "to_mcp",
    "to_openai",
    "to_openai_responses",
    "tool",
    "WritePolicy",
    "workspace_tools",
]

for _name in __all__:  # tracebacks and reprs name the public path, not the defining module
    _obj = globals()[_name]
    if (isinstance(_obj, type) or callable(_obj) and hasattr(_obj, "__code__")) and _obj.__module__.startswith(
        __name__ + "."
    ):
        _obj.__module__ = __name__
del _name, _obj


def _package_version() -> str:
    """The installed distribution's version (pyproject.toml is the one place it is written)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("codemode")
    except PackageNotFoundError:  # imported from a source tree that was never installed
        return "0+unknown"


__version__ = _package_version()
