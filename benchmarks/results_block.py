"""Write a generated table into benchmarks/RESULTS.md without touching the prose around it.

A block is the text between `<!-- begin NAME -->` and `<!-- end NAME -->`; a file without the
block gets it appended, so hand-written sections are never overwritten by a benchmark run.
"""

from __future__ import annotations

from pathlib import Path


def write_block(path: str | Path, name: str, text: str) -> None:
    file = Path(path)
    begin, end = f"<!-- begin {name} -->", f"<!-- end {name} -->"
    block = f"{begin}\n{text.rstrip()}\n{end}\n"
    old = file.read_text() if file.exists() else ""
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        _, tail = rest.split(end, 1)
        new = head + block.rstrip("\n") + tail
    else:
        new = old + ("\n" if old and not old.endswith("\n") else "") + ("\n" if old else "") + block
    file.write_text(new)
