"""Code Mode inside agent frameworks, each a thin adapter over ``CodeMode`` (optional extras).

- ``codemode.integrations.pydantic_ai.code_mode_toolset(mode)``: a pydantic-ai toolset with
  ``run_code`` and the Code Mode instructions (``pip install 'codemode[pydantic-ai]'``);
- ``codemode.integrations.openai_agents.code_mode_tool(mode)``: an OpenAI Agents SDK
  ``FunctionTool`` (``pip install 'codemode[openai-agents]'``);
- ``codemode.integrations.langchain.code_mode_tool(mode)``: a LangChain ``StructuredTool``
  (``pip install 'codemode[langchain]'``).

Every ``run_code`` call goes through ``CodeMode.handle``, so the registry pipeline (policies,
guards, approvals, observers, events) applies as for any other host. Each module imports its
framework on import; this package imports none of them.
"""

from __future__ import annotations

from typing import Any

from ..code_mode.bridge import RUN_CODE

__all__ = ["run_code_spec"]


def run_code_spec(code_mode: Any, agent: str | None = None) -> tuple[str, dict[str, Any]]:
    """``(description, parameters JSON Schema)`` of ``run_code`` as ``agent`` sees it.

    Raises ``ValueError`` when the registry has no ``run_code`` (the ``CodeMode`` was closed).
    """
    from ..registry.frozen import thaw

    definition = code_mode.registry.get(RUN_CODE, agent=agent)
    if definition is None:
        raise ValueError("the registry has no run_code: pass an open CodeMode")
    return definition.description, thaw(definition.parameters_schema)
