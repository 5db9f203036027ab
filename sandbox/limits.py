"""Resource limits for one run.

`Limits` is one immutable, keyword-only object. Every field has a documented default, a bad value
fails at construction naming the bound and the value, and `Limits.replace()` derives a variant.
`DEFAULT_LIMITS` is the instance used when a caller passes nothing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

KIB = 1024
MIB = 1024 * KIB


@dataclass(frozen=True, kw_only=True, slots=True)
class Limits:
    """What one run may use. All sizes are bytes, all times seconds.

    wall_time: wall-clock seconds before the run is stopped (`timeout`). [30]
    cpu_time: CPU seconds of the worker process (`timeout`). [30]
    memory: address space the worker may add on top of its warm baseline (`memory`). [256 MiB]
    max_output: printed bytes kept; the rest is dropped with an explicit marker. [64 KiB]
    max_result: size of the returned value as compact JSON (`invalid-result`). [1 MiB]
    max_calls: host calls per run (`call-limit`). [1,000]
    max_call_bytes: size of one host call's arguments as compact JSON. [1 MiB]
    max_recursion: Python frames the snippet may stack up. [200]
    max_source: size of the snippet's source text (`syntax`). [100 KiB]
    max_ast_nodes: syntax-tree nodes, checked before compiling (`syntax`). [20,000]
    max_ast_depth: syntax-tree nesting, checked before compiling (`syntax`). [100]
    max_operations: loop iterations and function calls, counted on the in-process backend only,
        where nothing can kill a runaway loop (`timeout`). [50,000,000]
    """

    wall_time: float = 30.0
    cpu_time: float = 30.0
    memory: int = 256 * MIB
    max_output: int = 64 * KIB
    max_result: int = 1 * MIB
    max_calls: int = 1000
    max_call_bytes: int = 1 * MIB
    max_recursion: int = 200
    max_source: int = 100 * KIB
    max_ast_nodes: int = 20_000
    max_ast_depth: int = 100
    max_operations: int = 50_000_000

    def __post_init__(self) -> None:
        problems = []
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            lo = _LOWER_BOUNDS[f.name]
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                problems.append(f"{f.name} must be a number, got {value!r}")
            elif value < lo:
                problems.append(f"{f.name} must be >= {lo}, got {value!r}")
        if problems:
            raise ValueError("invalid Limits: " + "; ".join(problems))

    def replace(self, **changes: Any) -> Limits:
        """A copy with some fields changed (validated like a new instance)."""
        return dataclasses.replace(self, **changes)

    def __repr__(self) -> str:
        changed = [
            f"{f.name}={getattr(self, f.name)!r}"
            for f in dataclasses.fields(self)
            if getattr(self, f.name) != f.default
        ]
        return f"Limits({', '.join(changed)})"

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Limits:
        return cls(**data)


_LOWER_BOUNDS: dict[str, float] = {
    "wall_time": 0.001,
    "cpu_time": 0.01,
    "memory": 16 * MIB,
    "max_output": 0,
    "max_result": 16,
    "max_calls": 0,
    "max_call_bytes": 16,
    "max_recursion": 20,
    "max_source": 1,
    "max_ast_nodes": 1,
    "max_ast_depth": 2,
    "max_operations": 1,
}

DEFAULT_LIMITS = Limits()


# The sentences a run ends with when it hits a limit: one wording for every backend.
def wall_time_message(seconds: float) -> str:
    return f"the run exceeded its wall-time limit of {seconds:g} s; do less work per run or split it"


def cpu_time_message(seconds: float) -> str:
    return f"the run exceeded its CPU-time limit of {seconds:g} s; do less work per run or split it"


def memory_message(limit: int) -> str:
    return (
        f"the run exceeded its memory limit of {limit // (1024 * 1024)} MiB; "
        "process data in smaller pieces"
    )
