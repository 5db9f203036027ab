"""Captured `print` output with a byte cap that is never silent.

Up to `limit` bytes are kept. Anything past that is dropped and counted, and the logs end with
`[output truncated: N bytes dropped]`. A snippet that keeps printing after the cap, to more than
`FLOOD_FACTOR` times it, is stopped with `output-limit`: it is flooding, not reporting.

`Output.sink`, when the host sets one, gets each piece of kept text as it is printed (the live
view of `RunController(on_output=...)`); dropped bytes never reach it.

`render_logs` writes the final log lines (printed lines, the truncation marker, warnings about
calls never awaited) for both backends, and for the host from what a worker reports: the marker
and the warnings are always the host's own text.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from .control import COLLECTING, RunOverError, Verdict
from .jsonvalue import escape_surrogates

FLOOD_FACTOR = 4
TRUNCATION_MARKER = "[output truncated: {dropped} bytes dropped]"
#: Warnings about un-awaited calls are capped like output: a handful, then a count.
MAX_AWAIT_WARNINGS = 5


def _byte_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "replace"))


def flood_message(limit: int) -> str:
    return (
        f"the snippet printed more than {FLOOD_FACTOR * limit} bytes "
        f"(the cap is {limit}); print a summary or a slice, not whole data"
    )


def is_flooding(limit: int, dropped: int) -> bool:
    return limit + dropped > FLOOD_FACTOR * max(limit, 1)


def cut(text: str, room: int) -> str:
    """The longest prefix of `text` that fits in `room` bytes of UTF-8."""
    return text.encode("utf-8", "replace")[: max(room, 0)].decode("utf-8", "ignore")


def render_logs(printed: Sequence[str], dropped: int, unawaited: Sequence[tuple[int | None, str]],
                more_unawaited: int, label: str, pending: int = 0) -> list[str]:
    """The run's log: printed lines, then the truncation marker when bytes were dropped, then
    a warning for each of the first calls never awaited (`unawaited`, line and name) and a
    count of the rest, then a note on tasks cancelled because the program ended first."""
    lines = list(printed)
    if dropped:
        lines.append(TRUNCATION_MARKER.format(dropped=dropped))
    for line, name in unawaited:
        where = f"line {line}: " if line else ""
        lines.append(f"[warning] {where}{label}.{name}(...) was never awaited, so it did not run")
    if more_unawaited:
        lines.append(f"[warning] {more_unawaited} more calls were never awaited")
    if pending:
        were = "was" if pending == 1 else "were"
        lines.append(f"note: {pending} task{'' if pending == 1 else 's'} {were} still pending when the "
                     f"program ended and {were} cancelled")
    return lines


class LogStream:
    """What `sys.stdout` is while snippet code runs: stdlib code a snippet calls that prints
    writes to the run's log instead, never to the host's stdout (an MCP stdio server's protocol
    stream, in-process) or the worker's. `sys.stderr` stays: what goes there is the
    interpreter's own (a warning names a host file and line, which must not reach the log)."""

    __slots__ = ("_output",)

    def __init__(self, output: Output) -> None:
        self._output = output

    def write(self, text: object) -> int:
        if COLLECTING.running:  # what a collection runs may be another run's (`run_log`)
            raise RunOverError() from None
        plain = text if type(text) is str else str.__str__(str(text))
        self._output.write(plain)
        return len(plain)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def run_log() -> LogStream:
    """Where host code that prints for a snippet writes: the log of the run whose step is
    running (`sys.stdout` then). Outside every step (CPython runs a freed generator's `close`
    when the collector gets to it, in the host) there is no run to print for, and it raises
    `RunOverError` rather than write to the host's stdout; so it does while a collection runs on
    this thread, inside a step too, since what the collector frees may be another run's (only on
    this thread: a host thread's collection once made a later run's own `prmonth` refuse)."""
    stream = sys.stdout
    if type(stream) is not LogStream or COLLECTING.running:
        raise RunOverError() from None
    return stream


class Output:
    """The run's log buffer; `print` is bound to it. A flood stops the run of `verdict`."""

    __slots__ = ("limit", "parts", "used", "dropped", "sink", "verdict", "open")

    def __init__(self, limit: int, verdict: Verdict) -> None:
        self.limit = limit
        self.verdict = verdict
        #: False once the run is over: a `print` kept past its run writes nothing and stops
        #: nothing (the host, or another run, may be the one calling it).
        self.open = True
        self.parts: list[str] = []
        self.used = 0
        self.dropped = 0
        #: Host code that gets kept text as it is printed (a plain `str`); None: nobody watches.
        self.sink: Callable[[str], None] | None = None

    def write(self, text: str) -> None:
        if not self.open:
            return
        text = escape_surrogates(text)
        size = _byte_len(text)
        room = self.limit - self.used
        if size <= room:
            self.parts.append(text)
            self.used += size
            if self.sink is not None and text:
                self.sink(text)
            return
        if room > 0:
            kept = cut(text, room)
            self.parts.append(kept)
            self.used = self.limit
            size -= _byte_len(kept)
            if self.sink is not None and kept:
                self.sink(kept)
        self._drop(size)

    def _drop(self, size: int) -> None:
        self.dropped += size
        if is_flooding(self.limit, self.dropped):
            raise self.verdict.stop("output-limit", flood_message(self.limit))

    def print(self, *args: object, sep: str | None = " ", end: str | None = "\n",
              file: object = None, flush: bool = False, **unknown: object) -> None:
        for name in unknown:
            raise TypeError(f"'{name}' is an invalid keyword argument for print()")
        if file is not None:
            raise TypeError("print(file=...) is not supported in the sandbox; output goes to the log")
        if sep is None:
            sep = " "
        if end is None:
            end = "\n"
        if not isinstance(sep, str) or not isinstance(end, str):
            raise TypeError("print() sep and end must be str")
        # Plain str throughout: a str subclass could lie about its length or ASCII-ness.
        parts = [a if type(a) is str else str.__str__(str(a)) for a in args]
        if not self.open:
            return
        sep, end = str.__str__(sep), str.__str__(end)
        total = sum(map(len, parts)) + len(sep) * max(len(parts) - 1, 0) + len(end)
        cap = FLOOD_FACTOR * max(self.limit, 1)
        if total <= cap:
            self.write(sep.join(parts) + end)
            return
        # More text than any run may print (one long string a hundred thousand times was
        # gigabytes joined): only what could be kept is joined, the rest is counted as dropped
        # (as characters: no fewer bytes), and the flood stops the run.
        head: list[str] = []
        size = 0
        for i, part in enumerate(parts):
            for piece in ((sep,) if i else ()) + (part,):
                head.append(piece[: cap - size])
                size += len(head[-1])
            if size >= cap:
                break
        self.write("".join(head))
        self._drop(total - size)

    def printed_lines(self) -> list[str]:
        """What was kept, one entry per line (no marker)."""
        text = "".join(self.parts)
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return lines
