"""The object a snippet calls its bindings through (for Code Mode, `tools`).

`tools.name(...)` and `tools["wire-name"](...)` return a `PendingCall`. Arguments are checked
here, inside the sandbox, before anything is dispatched: they must be lossless JSON and fit the
size limit, or the call raises at once and uses no call number. The namespace holds only names;
the function that turns a call into a request is stored under a private slot the snippet cannot
reach, and the class refuses to be constructed by anyone without the module's token.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Callable, Mapping
from typing import Any

from .guards import ReadOnly
from .jsonvalue import SIZE_SPAN, NotJSONError, TooLargeError, dumps, to_json_value
from .scheduler import CallRequest, PendingCall, make_request

_TOKEN = object()


def did_you_mean(name: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


class Binding:
    """One callable entry of the namespace."""

    __slots__ = ("_binding_label", "_binding_name", "_binding_issue", "_binding_limit")

    def __init__(self, *args: Any) -> None:
        if not args or args[0] is not _TOKEN:
            raise TypeError("host functions cannot be created by a snippet")
        label, name, issue, limit = args[1:]
        self._binding_label = label
        self._binding_name = name
        self._binding_issue = issue
        #: `max_call_bytes`: arguments that hold more items than this are refused before copying.
        self._binding_limit = limit

    def __call__(self, *args: Any, **kwargs: Any) -> PendingCall:
        # `type(tools.f).__call__(own_object)` would read a name and an issue hook the
        # snippet chose, and build a real request for any name.
        if type(self) is not Binding:
            raise TypeError("host functions cannot be created by a snippet")
        name = self._binding_name
        shown = f"{self._binding_label}.{name}()"
        limit = self._binding_limit
        bound = None if limit is None else SIZE_SPAN * limit
        try:
            plain_args = to_json_value(list(args), "$args", max_bytes=bound) if args else []
            plain_kwargs = to_json_value(kwargs, "$", max_bytes=bound)
        except TooLargeError:
            raise ValueError(call_too_large_message(shown, None, limit)) from None  # type: ignore[arg-type]
        except NotJSONError as exc:
            raise TypeError(f"{shown}: argument is not JSON: {exc}") from None
        except RecursionError:
            raise TypeError(f"{shown}: argument is nested too deeply to be JSON") from None
        frame = sys._getframe(1)
        line = frame.f_lineno if frame.f_code.co_filename == "<snippet>" else None
        payload = dumps([plain_args, plain_kwargs])
        return self._binding_issue(make_request(name, plain_args, plain_kwargs, payload, line))

    def __repr__(self) -> str:
        return f"<host function {self._binding_label}.{self._binding_name}>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError("host functions cannot be copied")


class Namespace(ReadOnly):
    """Attribute and item access to bindings by name, plus `describe()`/`list()` when the host
    supplied per-name documentation."""

    __slots__ = ("_ns_label", "_ns_entries", "_ns_docs")

    def __init__(
        self,
        token: object,
        label: str,
        names: list[str],
        issue: Callable[[CallRequest], PendingCall],
        docs: Mapping[str, str] | None = None,
        max_call_bytes: int | None = None,
    ) -> None:
        if token is not _TOKEN:
            raise TypeError("namespaces cannot be created by a snippet")
        object.__setattr__(self, "_ns_label", label)
        object.__setattr__(self, "_ns_entries",
                           {n: Binding(_TOKEN, label, n, issue, max_call_bytes) for n in names})
        object.__setattr__(self, "_ns_docs", dict(docs) if docs is not None else None)

    def _missing(self, name: str) -> AttributeError:
        return AttributeError(
            f"{self._ns_label} has no function '{name}'"
            + did_you_mean(name, sorted(self._ns_entries))
        )

    def __getattr__(self, name: str) -> Any:
        entry = self._ns_entries.get(name)
        if entry is not None:
            return entry
        if self._ns_docs is not None and name in ("describe", "list"):
            return self._describe if name == "describe" else self._list
        raise self._missing(name)

    def __getitem__(self, name: Any) -> Binding:
        if not isinstance(name, str):
            raise TypeError(f"{self._ns_label}[...] takes a function name as a string")
        entry = self._ns_entries.get(name)
        if entry is None:
            raise KeyError(str(self._missing(name)))
        return entry

    def __contains__(self, name: Any) -> bool:
        return name in self._ns_entries

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError(f"cannot modify {self._ns_label}")

    def __delattr__(self, name: str) -> None:
        raise TypeError(f"cannot modify {self._ns_label}")

    def __dir__(self) -> list[str]:
        return sorted(self._ns_entries)

    def __repr__(self) -> str:
        return f"<{self._ns_label}: {', '.join(sorted(self._ns_entries))}>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError(f"{self._ns_label} cannot be copied")

    def _list(self) -> list[str]:
        return sorted(self._ns_entries)

    def _describe(self, name: str) -> str:
        docs = self._ns_docs or {}
        if not isinstance(name, str):
            raise TypeError(f"{self._ns_label}.describe() takes a function name")
        if name not in docs:
            raise self._missing(name)
        return docs[name]


def make_namespace(
    label: str,
    names: list[str],
    issue: Callable[[CallRequest], PendingCall],
    docs: Mapping[str, str] | None = None,
    max_call_bytes: int | None = None,
) -> Namespace:
    return Namespace(_TOKEN, label, names, issue, docs, max_call_bytes)


def call_too_large_message(shown: str, size: int | None, limit: int) -> str:
    """`size`: the arguments' JSON size in bytes, or None when they were refused before their
    text was made (they hold more items than `limit`)."""
    amount = f"{size} bytes" if size is not None else f"more than {limit} bytes"
    return f"{shown}: the arguments are {amount} of JSON; the limit is {limit}"


def check_call_size(request: CallRequest, limit: int, label: str) -> None:
    payload = request._payload
    size = len(payload) if payload.isascii() else len(payload.encode("utf-8"))
    if size > limit:
        raise ValueError(call_too_large_message(f"{label}.{request._name}()", size, limit))


__all__ = ["Binding", "Namespace", "check_call_size", "did_you_mean", "make_namespace"]
