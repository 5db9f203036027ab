"""What a run gives back: `RunResult(value, logs, error)`.

Errors are data, not exceptions: a snippet fault, a limit hit and a dead worker all come back as a
`RunError` with a `kind` that says who must act and a `message` written for the model.

    kind            meaning                                            who acts
    syntax          the parser or the restriction policy refused it    snippet author
    exception       the snippet raised and did not catch               snippet author
    timeout         wall-clock or CPU time ran out                     snippet author
    memory          the memory limit was hit                           snippet author
    output-limit    the snippet kept printing far past the cap         snippet author
    call-limit      too many host calls                                snippet author
    invalid-result  the return value is not lossless JSON or too big   snippet author
    cancelled       the host cancelled the run                         host
    crashed         the worker process died                            host / sandbox

Every `RunError` message is passed through `escape_surrogates` and cut after
`MAX_ERROR_MESSAGE` characters when it is made, whoever made it, so an error always encodes as
UTF-8 and stays readable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .jsonvalue import escape_surrogates

ErrorKind = Literal[
    "syntax",
    "exception",
    "timeout",
    "memory",
    "output-limit",
    "call-limit",
    "cancelled",
    "crashed",
    "invalid-result",
]

JailLevel = Literal["full", "weak", "none"]

ERROR_KINDS: tuple[str, ...] = ErrorKind.__args__  # type: ignore[attr-defined]

#: Characters an error message keeps (a model reads it; a traceback longer than this is noise).
MAX_ERROR_MESSAGE = 16_000


def cut_text(text: str, limit: int) -> str:
    """`text`, or its first `limit` characters and a note of how many more there were."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"... ({len(text) - limit} more characters)"


@dataclass(frozen=True, slots=True)
class RunError:
    """Why a run failed. `message` is model-facing: it says what happened and what to do."""

    kind: ErrorKind
    message: str

    def __post_init__(self) -> None:
        if isinstance(self.message, str):
            message = cut_text(escape_surrogates(self.message), MAX_ERROR_MESSAGE)
            if message is not self.message:
                object.__setattr__(self, "message", message)

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


@dataclass(frozen=True, slots=True)
class RunResult:
    """The outcome of one run.

    value: the returned lossless-JSON value (None when the snippet returned nothing).
    logs: printed output, one entry per line.
    error: None on success.
    jail: how the run was confined: "full" (a worker under the syscall filter), "weak" (a
        worker on a host without it, accepted with `allow_weak_jail`), or "none" (in-process).
    reset: in a session, the one sentence that says the session lost its state during or just
        before this run (variables defined earlier are gone); None otherwise.
    """

    value: Any = None
    logs: list[str] = field(default_factory=list)
    error: RunError | None = None
    jail: JailLevel = "none"
    reset: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_json(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "logs": list(self.logs),
            "error": None
            if self.error is None
            else {"kind": self.error.kind, "message": self.error.message},
            "jail": self.jail,
            **({"reset": self.reset} if self.reset is not None else {}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunResult:
        err = data.get("error")
        return cls(
            value=data.get("value"),
            logs=list(data.get("logs") or []),
            error=None if err is None else RunError(err["kind"], err["message"]),
            reset=data.get("reset"),
        )
