"""Captured `print` output with a byte cap that is never silent.

Up to `limit` bytes are kept. Anything past that is dropped and counted, and the logs end with
`[output truncated: N bytes dropped]`. A snippet that keeps printing after the cap, to more than
`FLOOD_FACTOR` times it, is stopped with `output-limit`: it is flooding, not reporting.
"""

from __future__ import annotations

from .control import stop

FLOOD_FACTOR = 4
TRUNCATION_MARKER = "[output truncated: {dropped} bytes dropped]"


def _byte_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "replace"))


class Output:
    """The run's log buffer; `print` is bound to it."""

    __slots__ = ("limit", "parts", "used", "dropped")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.used = 0
        self.dropped = 0

    def write(self, text: str) -> None:
        size = _byte_len(text)
        room = self.limit - self.used
        if size <= room:
            self.parts.append(text)
            self.used += size
            return
        if room > 0:
            kept = text.encode("utf-8", "replace")[:room].decode("utf-8", "ignore")
            self.parts.append(kept)
            self.used = self.limit
            size -= _byte_len(kept)
        self.dropped += size
        if self.limit + self.dropped > FLOOD_FACTOR * max(self.limit, 1):
            raise stop(
                "output-limit",
                f"the snippet printed more than {FLOOD_FACTOR * self.limit} bytes "
                f"(the cap is {self.limit}); print a summary or a slice, not whole data",
            )

    def print(self, *args: object, sep: str | None = " ", end: str | None = "\n",
              file: object = None, flush: bool = False) -> None:
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
        self.write(str.join(str.__str__(sep), parts) + str.__str__(end))

    def lines(self) -> list[str]:
        text = "".join(self.parts)
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if self.dropped:
            lines.append(TRUNCATION_MARKER.format(dropped=self.dropped))
        return lines
