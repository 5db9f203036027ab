"""The host side of a binding call, shared by both backends.

A binding is a named async host function. Whatever it raises or returns, the snippet receives
either a lossless-JSON copy of the value or a `ToolCallError` with a message. `BindingError` is
how a binding chooses that message; any other exception is reported by type only, so host
paths and secrets in exception text never reach the snippet.

Text the host hands a run (source, binding names, docs, results, error messages) passes
through `escape_surrogates` first, as everything the run hands back does.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from .jsonvalue import NotJSONError, escape_surrogates, to_json_value

logger = logging.getLogger("sandbox")

Binding = Callable[..., Awaitable[Any]]
Bindings = Mapping[str, Binding]


class BindingError(Exception):
    """Raise this from a binding to fail the call with `message` shown to the snippet."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def escaped_inputs(code: str, bindings: Bindings, docs: Mapping[str, str] | None
                   ) -> tuple[str, Bindings, dict[str, str] | None]:
    """The run's source, bindings and docs with lone surrogates escaped, so both backends
    compile and describe the same text (a string literal keeps its value: `'\\udc80'` is the
    same string as the raw character)."""
    code = escape_surrogates(code)
    if not all(name.isascii() for name in bindings):
        bindings = {escape_surrogates(name): fn for name, fn in bindings.items()}
    if docs is not None:
        docs = {escape_surrogates(k): escape_surrogates(v) for k, v in docs.items()}
    return code, bindings, docs


async def invoke(bindings: Bindings, name: str, args: list[Any], kwargs: dict[str, Any]) -> tuple[bool, Any]:
    """Run one binding; `(True, value)` or `(False, message)`. Never raises but for cancellation."""
    fn = bindings.get(name)
    if fn is None:
        return False, f"no host function named '{name}'"
    try:
        value = await fn(*args, **kwargs)
    except BindingError as exc:
        return False, escape_surrogates(str(exc.message))
    except Exception as exc:
        logger.warning("binding %r raised", name, exc_info=True)
        return False, f"the host function failed ({type(exc).__name__})"
    try:
        return True, to_json_value(value, "$")
    except NotJSONError as exc:
        return False, f"the host function returned a value that is not JSON: {exc}"
    except RecursionError:
        return False, "the host function returned a value nested too deeply"
