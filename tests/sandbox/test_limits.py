"""Every limit has a test that trips it, on the backend that enforces it."""

from __future__ import annotations

import pytest
from sandbox_helpers import run

from sandbox import DEFAULT_LIMITS, Limits, RunError
from sandbox.jsonvalue import to_json_value
from sandbox.output import TRUNCATION_MARKER


def test_defaults_match_the_documented_values() -> None:
    d = DEFAULT_LIMITS
    assert (d.wall_time, d.cpu_time, d.memory) == (30.0, 30.0, 256 * 1024 * 1024)
    assert (d.max_output, d.max_result, d.max_calls) == (64 * 1024, 1024 * 1024, 1000)


def test_bad_limits_fail_at_construction_naming_bound_and_value() -> None:
    with pytest.raises(ValueError) as info:
        Limits(wall_time=0, max_calls=-1)
    assert str(info.value) == "invalid Limits: wall_time must be >= 0.001, got 0; max_calls must be >= 0, got -1"
    with pytest.raises(ValueError, match="memory must be a number, got 'big'"):
        Limits(memory="big")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Limits(1)  # type: ignore[misc]  # keyword-only


def test_limits_are_immutable_comparable_and_short_in_repr() -> None:
    a = Limits(wall_time=5)
    assert a == Limits(wall_time=5) and a != DEFAULT_LIMITS
    assert repr(a) == "Limits(wall_time=5)"
    assert a.replace(max_calls=3).max_calls == 3
    with pytest.raises(AttributeError):
        a.wall_time = 1  # type: ignore[misc]


@pytest.mark.parametrize("backend", ["inprocess", "worker"])
def test_wall_time(backend: str) -> None:
    result = run("while True:\n    pass", backend, limits=Limits(wall_time=0.5))
    assert result.error is not None and result.error.kind == "timeout"
    assert "wall-time limit of 0.5 s" in result.error.message


@pytest.mark.parametrize("backend", ["inprocess", "worker"])
def test_sleep_is_bounded_by_wall_time(backend: str) -> None:
    result = run("import asyncio\nprint('before')\nawait asyncio.sleep(3600)", backend, limits=Limits(wall_time=0.5))
    assert result.error is not None and result.error.kind == "timeout"


def test_cpu_time() -> None:
    result = run("while True:\n    pass", "worker", limits=Limits(wall_time=10, cpu_time=1))
    assert result.error is not None and result.error.kind == "timeout"
    assert "CPU-time limit of 1 s" in result.error.message


def test_memory() -> None:
    result = run("x = 'a' * (200 * 1024 * 1024)\nreturn len(x)", "worker", limits=Limits(memory=64 * 1024 * 1024))
    assert result.error is not None and result.error.kind == "memory"
    assert result.error.message == "the run exceeded its memory limit of 64 MiB; process data in smaller pieces"


def test_memory_error_can_be_caught_by_the_snippet() -> None:
    code = "try:\n    x = 'a' * (200 * 1024 * 1024)\nexcept MemoryError:\n    x = 'small'\nreturn x"
    assert run(code, "worker", limits=Limits(memory=64 * 1024 * 1024)).value == "small"


@pytest.mark.parametrize("backend", ["inprocess", "worker"])
def test_output_is_truncated_with_a_marker(backend: str) -> None:
    result = run("print('x' * 150)", backend, limits=Limits(max_output=100))
    assert result.ok
    assert result.logs == ["x" * 100, TRUNCATION_MARKER.format(dropped=51)]


@pytest.mark.parametrize("backend", ["inprocess", "worker"])
def test_print_flood_stops_the_run(backend: str) -> None:
    result = run("while True:\n    print('flood')", backend, limits=Limits(max_output=1000))
    assert result.error is not None and result.error.kind == "output-limit"
    assert result.logs[-1].startswith("[output truncated: ")


@pytest.mark.parametrize("backend", ["inprocess", "worker"])
def test_result_size(backend: str) -> None:
    result = run("return 'x' * 2000", backend, limits=Limits(max_result=1000))
    assert result.error is not None and result.error.kind == "invalid-result"
    assert result.error.message == (
        "the return value is 2002 bytes of JSON; the limit is 1000 bytes. Return a summary or a slice"
    )


@pytest.mark.parametrize("backend", ["inprocess", "worker"])
def test_host_calls_per_run(backend: str) -> None:
    calls: list[int] = []

    async def count(x: int) -> int:
        calls.append(x)
        return x

    result = run("for i in range(100):\n    await tools.count(x=i)", backend,
                 bindings={"count": count}, limits=Limits(max_calls=5))
    assert result.error is not None and result.error.kind == "call-limit"
    assert "more than 5 host calls" in result.error.message
    assert calls == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("backend", ["inprocess", "worker"])
def test_call_argument_size(backend: str) -> None:
    calls: list[object] = []

    async def sink(data: str) -> None:
        calls.append(data)

    code = "try:\n    await tools.sink(data='x' * 5000)\nexcept ValueError as e:\n    return str(e)"
    result = run(code, backend, bindings={"sink": sink}, limits=Limits(max_call_bytes=1000))
    assert result.value == "tools.sink(): the arguments are 5016 bytes of JSON; the limit is 1000"
    assert calls == []


#: A list that holds the same list twice, forty levels deep: 2**40 items to copy as JSON from
#: forty loop iterations. It is refused before it is copied, whatever the machine.
SHARED_TWICE = "a = [0]\nfor _ in range(40):\n    a = [a, a]\n"


@pytest.mark.parametrize("backend", ["inprocess", "worker"])
def test_a_result_that_shares_a_list_forty_levels_deep_is_refused_before_it_is_copied(backend: str) -> None:
    result = run(SHARED_TWICE + "return a", backend, limits=Limits(max_result=1000))
    assert result.error is not None and result.error.kind == "invalid-result", result
    assert result.error.message == (
        "the return value is more than 1000 bytes of JSON; the limit is 1000 bytes. Return a summary or a slice"
    )


@pytest.mark.parametrize("backend", ["inprocess", "worker"])
def test_call_arguments_that_share_a_list_forty_levels_deep_are_refused(backend: str) -> None:
    calls: list[object] = []

    async def sink(data: object) -> None:
        calls.append(data)

    code = SHARED_TWICE + "try:\n    await tools.sink(data=a)\nexcept ValueError as e:\n    return str(e)"
    result = run(code, backend, bindings={"sink": sink}, limits=Limits(max_call_bytes=1000))
    assert result.value == "tools.sink(): the arguments are more than 1000 bytes of JSON; the limit is 1000"
    assert calls == []


@pytest.mark.parametrize("backend", ["inprocess", "worker"])
def test_one_long_string_many_times_is_refused_before_it_is_joined_or_copied(backend: str) -> None:
    # A review printed and returned one 10,000-character string a hundred thousand times: the
    # host joined and copied a gigabyte (1.9 GB of host memory in-process) before the size
    # checks ran. The checks count as they go: the output floods, the value is refused.
    long = "s = 'a' * 10_000\n"
    printed = run(long + "print(*([s] * 100_000))", backend, limits=Limits(max_output=1000))
    assert printed.error is not None and printed.error.kind == "output-limit", printed
    assert sum(len(line) for line in printed.logs) < 2000
    returned = run(long + "return [s] * 100_000", backend, limits=Limits(max_result=1000))
    assert returned.error == RunError(
        "invalid-result", "the return value is more than 1000 bytes of JSON; the limit is 1000 bytes. "
        "Return a summary or a slice")


def test_big_integers_count_by_their_digits() -> None:
    # Each item counted one unit, however many digits it has: 60,000 references to a
    # 3,000-digit integer cost 15 s and 490 MB in-process before the size check.
    result = run("big = 10 ** 3000\nreturn [big] * 60_000", "inprocess", limits=Limits(max_result=1000))
    assert result.error == RunError(
        "invalid-result", "the return value is more than 1000 bytes of JSON; the limit is 1000 bytes. "
        "Return a summary or a slice")


def test_printing_many_parts_keeps_what_fits() -> None:
    result = run("print(*range(3), sep='-', end='!\\n')\nprint('x' * 30, 'y' * 30)", "inprocess",
                 limits=Limits(max_output=1000))
    assert result.ok and result.logs == ["0-1-2!", "x" * 30 + " " + "y" * 30]


def test_shared_lists_count_where_they_appear() -> None:
    from sandbox.jsonvalue import TooLargeError

    shared = [1, 2]
    value = {"x": [shared, shared, shared]}  # 1 + 1 (the key's text) + 3 + 3 * 2 = 11
    assert to_json_value(value, max_bytes=11) == {"x": [[1, 2], [1, 2], [1, 2]]}
    with pytest.raises(TooLargeError):
        to_json_value(value, max_bytes=10)
    text = "é" * 1000
    assert to_json_value([text] * 3, max_bytes=3003) == [text] * 3
    with pytest.raises(TooLargeError):  # a string counts wherever it appears, before it is copied
        to_json_value([text] * 100_000, max_bytes=3003)


def test_a_step_that_ends_past_the_deadline_ends_the_run_in_process() -> None:
    # In-process, ticks read the clock only every few thousand ticks, and one tick's C work can
    # run long (a review made one class with a thousand bases: 45 s, reported as success). A
    # step that ends past the deadline ends the run. (10**8 additions take far longer than
    # 0.2 s on any machine this runs on.)
    result = run("return sum(range(10**8))", "inprocess", limits=Limits(wall_time=0.2))
    assert result.error is not None and result.error.kind == "timeout", result


def test_recursion_depth() -> None:
    code = "def down(n):\n    return down(n + 1)\nreturn down(0)"
    result = run(code, "worker", limits=Limits(max_recursion=50))
    assert result.error is not None and result.error.kind == "exception"
    assert result.error.message.startswith("RecursionError: maximum recursion depth exceeded")
    depth = run("def down(n):\n    try:\n        return down(n + 1)\n    except RecursionError:\n        return n\nreturn down(0)",
                "worker", limits=Limits(max_recursion=50)).value
    assert 45 <= depth <= 52


def test_operation_budget_in_process() -> None:
    result = run("n = 0\nfor i in range(10**9):\n    n += 1", "inprocess", limits=Limits(max_operations=100_000))
    assert result.error is not None and result.error.kind == "timeout"
    assert "more than 100000 operations" in result.error.message


def test_operation_budget_counts_c_level_consumers_of_big_ranges() -> None:
    result = run("return sum(range(10**12))", "inprocess", limits=Limits(max_operations=100_000))
    assert result.error is not None and result.error.kind == "timeout"


@pytest.mark.parametrize(
    ("limits", "code", "fragment"),
    [
        (Limits(max_source=10), "x = 12345678901", "the snippet is 15 bytes; the limit is 10 bytes"),
        (Limits(max_ast_nodes=20), "x = [" + "1, " * 30 + "]", "more than 20 syntax nodes"),
        (Limits(max_ast_depth=10), "x = " + "(" * 20 + "1" + ")" * 20 + "\nx = [[[[[[[[[[[[1]]]]]]]]]]]]", "nests deeper than 10 levels"),
    ],
    ids=["source", "nodes", "depth"],
)
def test_source_and_tree_limits(limits: Limits, code: str, fragment: str, backend: str) -> None:
    result = run(code, backend, limits=limits)
    assert result.error is not None and result.error.kind == "syntax"
    assert fragment in result.error.message
