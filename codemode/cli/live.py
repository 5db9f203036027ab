"""What the CLI shows while a program runs: a one-line status on a terminal, the program's prints
as they happen, and upstream MCP servers' stderr, none written over another.

The status line lives on stderr and is rewritten in place (``\\r``). Every other line goes
*above* it: the status line is cleared, the line is written (to stdout or stderr, which on a
terminal are the same screen), and the status line is drawn again. Text a program or a server
wrote is shown with terminal controls made visible (``--raw`` keeps a program's own).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TextIO

from ..registry.output import visible

__all__ = ["CLEAR", "LivePrinter", "StatusLine", "is_terminal", "server_stderr"]

#: Carriage return, then erase to the end of the line.
CLEAR = "\r\033[K"


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (a closed or odd stream is not)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


class StatusLine:
    """A transient line on a terminal's stderr; on anything else it draws nothing."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.enabled = is_terminal(out)
        self.text = ""

    def show(self, text: str) -> None:
        if not self.enabled:
            return
        self.text = text
        self.out.write(CLEAR + text)
        self.out.flush()

    def clear(self) -> None:
        """Erase the line for good (the run is over)."""
        if self.text:
            self.out.write(CLEAR)
            self.out.flush()
            self.text = ""

    def above(self, stream: TextIO, text: str) -> None:
        """Write whole lines ``text`` above the status line, then draw it again."""
        if self.text:
            self.out.write(CLEAR)
            self.out.flush()
        stream.write(text)
        stream.flush()
        if self.text:
            self.out.write(self.text)
            self.out.flush()


class LivePrinter:
    """A run's printed text, shown on the terminal line by line as it arrives.

    ``feed`` is the run's ``on_output``; a line is shown once its newline arrives (a piece
    without one waits for it, or for the end of the run). ``unshown(logs)`` is the count of
    leading log lines already on the screen, so the final report prints only the rest.
    """

    def __init__(self, out: TextIO, status: StatusLine, show: Callable[[str], str] = visible) -> None:
        self.out = out
        self.status = status
        self.show = show
        self.pending = ""
        self.lines: list[str] = []

    def feed(self, text: str) -> None:
        self.pending += text
        if "\n" not in self.pending:
            return
        *complete, self.pending = self.pending.split("\n")
        self.lines.extend(complete)
        self.status.above(self.out, "".join(self.show(line) + "\n" for line in complete))

    def shown(self, logs: Sequence[str]) -> int:
        """How many of ``logs``' first lines were shown live (they match what was shown)."""
        count = 0
        for seen, logged in zip(self.lines, logs, strict=False):
            if seen != logged:
                break
            count += 1
        return count


def server_stderr(stderr: TextIO, status: StatusLine | None = None) -> Callable[[str, str], None]:
    """The ``stderr_lines`` callback of the CLI: each line as ``[server] line``, controls made
    visible, above the status line (or, without one, after clearing whatever a terminal shows)."""
    tty = is_terminal(stderr)

    def relay(server: str, line: str) -> None:
        text = f"[{visible(server)}] {visible(line)}\n"
        if status is not None and status.text:
            status.above(stderr, text)
            return
        # The MCP start line (``codemode.mcp.loading``) may be up: it is not ``status``'s.
        stderr.write((CLEAR if tty else "") + text)
        stderr.flush()

    return relay
