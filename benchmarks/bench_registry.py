"""Overhead of one ``Registry.execute`` through the full pipeline, against a direct call.

Every tool call from a snippet pays this cost, so it is measured on its own: a two-field argument
schema and a string output schema, with no listeners and with one listener at each hook. Argument
plus output validation is timed separately (compiled fast path, and plain jsonschema for
reference), and "rest" is the pipeline minus validation. Each figure is the median of repeated
runs, in microseconds per call.

Run: ``.venv/bin/python benchmarks/bench_registry.py [--repeats 7] [--number 5000]``
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from jsonschema import Draft202012Validator

from codemode import Registry, ToolCall, define_tool, freeze

PARAMETERS = {
    "path": {"type": "string", "required": True, "description": "Absolute path"},
    "limit": {"type": "integer"},
}
ARGS = {"path": "/tmp/notes.txt", "limit": 20}


async def read_file(args: Any, ctx: Any) -> str:
    return args["path"]


def make_registry(*, pattern: bool = False) -> Registry:
    registry = Registry()
    if pattern:
        params = {
            "type": "object",
            "properties": {"path": {"type": "string", "pattern": "^/"}, "limit": {"type": "integer"}},
            "required": ["path"],
            "additionalProperties": False,
        }
        definition = define_tool(
            name="read_file", description="Read a file.", parameters_schema=params,
            output={"schema": {"type": "string"}}, execute=read_file,
        )
    else:
        definition = define_tool(
            name="read_file", description="Read a file.", parameters=PARAMETERS,
            output={"schema": {"type": "string"}}, execute=read_file,
        )
    registry.register(definition)
    return registry


def add_one_listener_per_hook(registry: Registry) -> None:
    registry.on_pre_execute(lambda ctx: None)
    registry.add_guard(lambda ctx: None)

    async def wrapper(ctx: Any, call_next: Callable[[], Awaitable[Any]]) -> Any:
        return await call_next()

    registry.wrap_execute(wrapper)
    registry.on_post_execute(lambda ctx, result: None)
    registry.on_result(lambda result, ctx: None)


async def run_batch(fn: Callable[[], Any], number: int) -> float:
    """Microseconds per call for ``number`` calls of ``fn`` (awaited when it returns an awaitable)."""
    probe = fn()
    is_async = hasattr(probe, "__await__")
    if is_async:
        await probe
    start = time.perf_counter()
    if is_async:
        for _ in range(number):
            await fn()
    else:
        for _ in range(number):
            fn()
    return (time.perf_counter() - start) / number * 1e6


async def interleaved(scenarios: dict[str, Callable[[], Any]], number: int, repeats: int) -> dict[str, float]:
    """Median per scenario; scenarios alternate within each repeat so machine load hits all alike."""
    for fn in scenarios.values():
        await run_batch(fn, min(number, 1000))
    runs: dict[str, list[float]] = {name: [] for name in scenarios}
    for _ in range(repeats):
        for name, fn in scenarios.items():
            runs[name].append(await run_batch(fn, number))
    return {name: statistics.median(values) for name, values in runs.items()}


async def measure(number: int, repeats: int) -> dict[str, float]:
    call = ToolCall("call-1", "read_file", ARGS)
    plain = make_registry()
    hooked = make_registry()
    add_one_listener_per_hook(hooked)
    fallback = make_registry(pattern=True)
    definition = plain.get("read_file")
    assert definition is not None and definition.output_validator is not None
    frozen_args = freeze(ARGS)
    args_check, output_check = definition.arguments_validator, definition.output_validator
    raw_args = Draft202012Validator(dict(definition.arguments_validator.schema))
    raw_out = Draft202012Validator({"type": "string"})
    assert not (await plain.execute(call)).is_error and not (await hooked.execute(call)).is_error

    return await interleaved(
        {
            "direct call": lambda: read_file(frozen_args, None),
            "execute, no listeners": lambda: plain.execute(call),
            "execute, one listener per hook": lambda: hooked.execute(call),
            "execute, schema outside the fast subset": lambda: fallback.execute(call),
            "validation (args + output), compiled": lambda: (
                args_check.violations(frozen_args),
                output_check.violations("x"),
            ),
            "validation (args + output), plain jsonschema": lambda: (
                raw_args.is_valid(ARGS),
                raw_out.is_valid("x"),
            ),
        },
        number,
        repeats,
    )


def report(results: dict[str, float], number: int, repeats: int) -> str:
    direct = results["direct call"]
    validation = results["validation (args + output), compiled"]
    lines = [
        "| measurement | µs per call |",
        "| --- | ---: |",
        *(f"| {name} | {value:.2f} |" for name, value in results.items()),
        "",
        "| derived | µs per call |",
        "| --- | ---: |",
        f"| pipeline overhead, no listeners (execute − direct) | {results['execute, no listeners'] - direct:.2f} |",
        f"| of which validation (compiled) | {validation:.2f} |",
        f"| rest of the pipeline, no listeners | {results['execute, no listeners'] - direct - validation:.2f} |",
        f"| cost of one listener at each of the five hooks | {results['execute, one listener per hook'] - results['execute, no listeners']:.2f} |",
        "",
        f"Medians of {repeats} runs × {number} calls; Python {platform.python_version()}, "
        f"{platform.machine()}, asyncio backend; target ≤ 40 µs per call with no listeners.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--number", type=int, default=5000)
    ns = parser.parse_args()
    results = anyio.run(measure, ns.number, ns.repeats)
    print(report(results, ns.number, ns.repeats))


if __name__ == "__main__":
    main()
