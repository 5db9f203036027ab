"""Error kinds tell the truth: a snippet's own `MemoryError` is an `exception`; lone surrogates
never crash a run or the CLI; pre-flight never fails with a host exception.

Each case runs on both backends unless it needs the worker's memory limit.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

import sandbox
import sdk_gen
from codemode.cli import main as cli_main
from sandbox.policy import TOO_DEEP_TO_PARSE

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]
MIB = 1024 * 1024
MEMORY_MESSAGE = "the run exceeded its memory limit of 64 MiB; process data in smaller pieces"


async def run(code: str, backend: str, **kwargs: Any) -> sandbox.RunResult:
    limits = sandbox.Limits(wall_time=10, cpu_time=10, memory=64 * MIB)
    return await sandbox.run(code, limits=limits, backend=backend, **kwargs)  # type: ignore[arg-type]


def utf8(result: sandbox.RunResult) -> str:
    """The result as UTF-8 JSON text (raises if any string still holds a lone surrogate)."""
    return json.dumps(result.to_json(), ensure_ascii=False).encode("utf-8").decode("utf-8")


# -- MemoryError: the snippet's own, or the limit's ------------------------------------------

OWN_MEMORY_ERRORS = [
    pytest.param("raise MemoryError('FAKE-OOM')", "MemoryError: FAKE-OOM", id="instance"),
    pytest.param("raise MemoryError", "MemoryError", id="class"),
    pytest.param("class Tight(MemoryError):\n    pass\nraise Tight('FAKE-OOM')", "Tight: FAKE-OOM", id="subclass"),
    pytest.param("raise MemoryError('FAKE-OOM') from ValueError('v')", "MemoryError: FAKE-OOM", id="from"),
    pytest.param("e = MemoryError('FAKE-OOM')\nraise e", "MemoryError: FAKE-OOM", id="prebuilt"),
    pytest.param("try:\n    raise MemoryError('FAKE-OOM')\nexcept MemoryError:\n    raise", "MemoryError: FAKE-OOM",
                 id="caught-reraised-bare"),
    pytest.param("try:\n    raise MemoryError('FAKE-OOM')\nexcept MemoryError as e:\n    raise e", "MemoryError: FAKE-OOM",
                 id="caught-reraised-by-name"),
    pytest.param("def f():\n    raise MemoryError('FAKE-OOM')\ntry:\n    f()\nexcept Exception as e:\n    saved = e\nraise saved",
                 "MemoryError: FAKE-OOM", id="saved-and-reraised"),
    pytest.param("import asyncio\nasync def f():\n    raise MemoryError('FAKE-OOM')\nawait asyncio.gather(f())",
                 "MemoryError: FAKE-OOM", id="in-gather"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "first_line"), OWN_MEMORY_ERRORS)
async def test_a_snippets_own_memory_error_is_an_exception(backend: str, code: str, first_line: str) -> None:
    result = await run(code, backend)
    assert result.error is not None and result.error.kind == "exception", result.error
    assert result.error.message.splitlines()[0] == first_line
    assert "Traceback (most recent call last):" in result.error.message
    assert "memory limit" not in result.error.message


REAL_MEMORY_ERRORS = [
    pytest.param("x = bytearray(2 ** 62)", id="impossible-allocation"),
    pytest.param("try:\n    x = bytearray(2 ** 62)\nexcept MemoryError:\n    raise", id="caught-reraised-bare"),
    pytest.param("try:\n    x = bytearray(2 ** 62)\nexcept MemoryError as e:\n    raise e", id="caught-reraised-by-name"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("code", REAL_MEMORY_ERRORS)
async def test_an_allocation_that_fails_is_memory(backend: str, code: str) -> None:
    result = await run(code, backend)
    assert result.error == sandbox.RunError("memory", MEMORY_MESSAGE)


async def test_an_allocation_bomb_is_still_memory_on_the_worker() -> None:
    result = await run("x = []\nwhile True:\n    x.append(' ' * 100000)", "worker")
    assert result.error == sandbox.RunError("memory", MEMORY_MESSAGE)


async def test_the_mark_cannot_be_removed_by_the_snippet() -> None:
    code = (
        "e = MemoryError('FAKE-OOM')\n"
        "try:\n    raise e\nexcept MemoryError:\n    pass\n"
        "try:\n    delattr(e, '_sandbox_raised_by_snippet_')\nexcept Exception as refused:\n"
        "    print(type(refused).__name__)\n"
        "raise e"
    )
    for backend in BACKENDS:
        result = await run(code, backend)
        assert result.error is not None and result.error.kind == "exception", result.error
        assert result.error.message.splitlines()[0] == "MemoryError: FAKE-OOM"
        assert len(result.logs) == 1  # the delattr was refused


THROWN = [
    pytest.param("def g():\n    yield 1\nx = g()\nnext(x)\nx.throw(MemoryError('FAKE-OOM'))", id="generator"),
    pytest.param("def g():\n    yield 1\nx = g()\nnext(x)\nx.throw(MemoryError, MemoryError('FAKE-OOM'), None)",
                 id="three-arguments"),
    pytest.param("def g():\n    yield 1\nx = g()\nnext(x)\ntype(x).throw(x, MemoryError('FAKE-OOM'))", id="unbound"),
    pytest.param("async def c():\n    pass\nx = c()\nx.throw(MemoryError('FAKE-OOM'))", id="coroutine"),
    pytest.param("async def a():\n    yield 1\nx = a()\nawait x.asend(None)\nawait x.athrow(MemoryError('FAKE-OOM'))",
                 id="async-generator"),
    # The awaitables an async generator hands out have a `throw` of their own.
    pytest.param("async def a():\n    yield 1\nx = a()\nawait x.asend(None)\nx.asend(None).throw(MemoryError('FAKE-OOM'))",
                 id="asend-awaitable"),
    pytest.param("async def a():\n    yield 1\nx = a()\nawait x.asend(None)\nanext(x).throw(MemoryError('FAKE-OOM'))",
                 id="anext-awaitable"),
    pytest.param("async def a():\n    yield 1\nx = a()\nawait x.asend(None)\n"
                 "x.athrow(ValueError).throw(MemoryError('FAKE-OOM'))", id="athrow-awaitable"),
    pytest.param("async def a():\n    yield 1\nx = a()\nawait x.asend(None)\n"
                 "type(x.asend(None)).throw(x.asend(None), MemoryError('FAKE-OOM'))", id="awaitable-unbound"),
]


@pytest.mark.parametrize("code", THROWN)
@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_memory_error_thrown_into_a_generator_is_an_exception(backend: str, code: str) -> None:
    result = await run(code, backend)
    assert result.error is not None and result.error.kind == "exception", result.error
    assert result.error.message.splitlines()[0] == "MemoryError: FAKE-OOM"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_throw_still_delivers_other_exceptions(backend: str) -> None:
    code = ("def g():\n    try:\n        yield 1\n    except ValueError as e:\n        yield str(e)\n"
            "x = g()\nnext(x)\nreturn x.throw(ValueError('caught'))")
    result = await run(code, backend)
    assert result.ok and result.value == "caught", result


# -- lone surrogates ----------------------------------------------------------------------------

async def give_back(s: str = "") -> str:
    return s


async def surrogate_result() -> dict[str, str]:
    return {"k\udc80": "v\ud800"}


async def surrogate_failure() -> None:
    raise sandbox.BindingError("no file named bad\udcff.txt")


BINDINGS = {"give_back": give_back, "surrogate_result": surrogate_result, "surrogate_failure": surrogate_failure}

SURROGATES = [
    pytest.param("print('a\\udc80b')\nreturn 1", 1, ["a\\udc80b"], None, id="print"),
    pytest.param("print('ok')\nraise ValueError('bad \\ud800 text')", None, ["ok"],
                 ("exception", "ValueError: bad \\ud800 text"), id="exception-text"),
    pytest.param("return {'k\\udfff': ['v\\udc00']}", {"k\\udfff": ["v\\udc00"]}, [], None, id="return-value"),
    pytest.param("return await tools.give_back(s='x\\udc80')", "x\\udc80", [], None, id="tool-argument"),
    pytest.param("return await tools.surrogate_result()", {"k\\udc80": "v\\ud800"}, [], None, id="tool-result"),
    pytest.param("try:\n    await tools.surrogate_failure()\nexcept ToolCallError as e:\n    return str(e)",
                 "surrogate_failure: no file named bad\\udcff.txt", [], None, id="tool-error-message"),
    pytest.param("print('x' * 10, '\\udc80' * 100)", None, ["x" * 10 + " " + "\\udc80" * 100], None, id="many"),
    pytest.param("print('\udc80')\nreturn len('\udc80')", 1, ["\\udc80"], None, id="raw-character-in-source"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "value", "logs", "error"), SURROGATES)
async def test_lone_surrogates_cross_every_boundary_escaped(
    backend: str, code: str, value: Any, logs: list[str], error: tuple[str, str] | None
) -> None:
    result = await run(code, backend, bindings=BINDINGS)
    if error is None:
        assert result.error is None, result.error
        assert result.value == value
    else:
        assert result.error is not None and result.error.kind == error[0]
        assert result.error.message.splitlines()[0] == error[1]
    assert result.logs == logs
    assert utf8(result)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_surrogates_in_docs_and_names_do_not_crash(backend: str) -> None:
    result = await run(
        "print(tools.describe('give_back'))\nreturn tools.list()", backend,
        bindings={"give_back": give_back}, docs={"give_back": "echo \udc80"},
    )
    jail = "full" if backend == "worker" else "none"
    assert result == sandbox.RunResult(value=["give_back"], logs=["echo \\udc80"], jail=jail)


def test_the_escape_is_backslashreplace_and_leaves_valid_text_alone() -> None:
    from sandbox.jsonvalue import escape_surrogates

    assert escape_surrogates("a\udc80\ud83d\ude00b") == "a\\udc80\\ud83d\\ude00b"
    text = "plain é 😀"
    assert escape_surrogates(text) is text


# -- pre-flight and parsing never fail with a host exception ------------------------------------

DEEP = [
    pytest.param("-" * 30000 + "1", id="unary-minus"),
    pytest.param("not " * 20000 + "x", id="not"),
    pytest.param("x" + ".a" * 30000, id="attribute-chain"),
    pytest.param("f" + "()" * 30000, id="call-chain"),
    pytest.param("1" + "+1" * 30000, id="binary-chain"),
    pytest.param("lambda: " * 5000 + "1", id="lambdas"),
    pytest.param("return await tools.give_back(s=" + "-" * 30000 + "1)", id="in-a-tool-call"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("code", DEEP)
async def test_too_deep_to_parse_is_a_syntax_error(backend: str, code: str) -> None:
    result = await sandbox.run(code, limits=sandbox.Limits(max_source=200_000), backend=backend,  # type: ignore[arg-type]
                               bindings={"give_back": give_back})
    jail = "full" if backend == "worker" else "none"
    assert result == sandbox.RunResult(error=sandbox.RunError("syntax", TOO_DEEP_TO_PARSE), jail=jail)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("code", ["(" * 5000 + "1" + ")" * 5000, "[" * 5000 + "]" * 5000, "{1:" * 3000 + "1" + "}" * 3000],
                         ids=["parens", "lists", "dicts"])
async def test_too_many_brackets_is_one_short_syntax_error(backend: str, code: str) -> None:
    result = await sandbox.run(code, backend=backend)  # type: ignore[arg-type]
    assert result.error is not None and result.error.kind == "syntax"
    first, quoted, caret = result.error.message.split("\n")
    assert first == "line 1: invalid syntax: too many nested parentheses"
    assert len(quoted) < 200 and quoted.strip().startswith("...")  # a window, not a 10,000-character line
    assert caret.strip() == "^"


@pytest.mark.parametrize("code", DEEP)
def test_sdk_gen_check_never_raises_for_a_deep_snippet(code: str) -> None:
    spec = sdk_gen.ToolSpec("give_back", "Echo.", {"type": "object", "properties": {"s": {"type": "string"}}}, None)
    sdk = sdk_gen.generate([spec], allowed_imports=sandbox.ALLOWED_MODULES)
    assert sdk_gen.check(code, sdk) == []  # unparseable: the sandbox reports it as `syntax`


def cli(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli_main(list(argv), stdout=out, stderr=err, stdin=io.StringIO(stdin))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("backend", BACKENDS)
def test_codemode_run_of_a_deep_snippet_exits_1_with_one_line(backend: str, tmp_path: Any) -> None:
    code, out, err = cli("run", "-", "--root", str(tmp_path), "--backend", backend, stdin="-" * 30000 + "1")
    assert (code, out) == (1, "")
    assert err == f"<stdin>: Error: code run failed (syntax): {TOO_DEEP_TO_PARSE}\n"


@pytest.mark.parametrize("backend", BACKENDS)
def test_codemode_run_json_of_a_deep_snippet(backend: str, tmp_path: Any) -> None:
    code, out, err = cli("run", "-", "--json", "--root", str(tmp_path), "--backend", backend, stdin="-" * 30000 + "1")
    assert (code, err) == (1, "")
    assert json.loads(out)["error"] == {"kind": "syntax", "message": TOO_DEEP_TO_PARSE}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("json_flag", [(), ("--json",)], ids=["text", "json"])
def test_codemode_run_with_surrogates_keeps_its_output(backend: str, json_flag: tuple[str, ...], tmp_path: Any) -> None:
    snippet = "print('a\\udc80')\nreturn 'b\\ud800'"
    code, out, err = cli("run", "-", *json_flag, "--root", str(tmp_path), "--backend", backend, stdin=snippet)
    assert (code, err) == (0, "")
    if json_flag:
        payload = json.loads(out)
        assert (payload["result"], payload["logs"]) == ("b\\ud800", ["a\\udc80"])
    else:
        assert out == "a\\udc80\nb\\ud800\n"
    out.encode("utf-8")


@pytest.mark.parametrize("backend", BACKENDS)
def test_codemode_run_of_a_failing_snippet_with_surrogates(backend: str, tmp_path: Any) -> None:
    snippet = "print('a\\udc80')\nraise ValueError('b\\ud800')"
    code, out, err = cli("run", "-", "--root", str(tmp_path), "--backend", backend, stdin=snippet)
    assert (code, out) == (1, "a\\udc80\n")
    assert err.startswith("<stdin>: Error: code run failed (exception): ValueError: b\\ud800\n")
    err.encode("utf-8")


# -- syntax is what the host's own compile says ------------------------------------------------

SYNTAX_ERRORS = [
    pytest.param("x = = 1", id="parse"),
    pytest.param("x = 1\nexec('1')", id="policy"),
    pytest.param("def f():\n    return 1\nyield 2", id="stray-yield"),
    pytest.param("x" * 200_000, id="too-big"),
]


@pytest.mark.parametrize("code", SYNTAX_ERRORS)
async def test_a_syntax_error_reads_the_same_on_every_backend_and_in_a_session(code: str) -> None:
    # The worker's `syntax` is believed only when the host's own compile refuses the snippet,
    # with the host's text: the three ways to run it agree word for word.
    inprocess = await run(code, "inprocess")
    worker = await run(code, "worker")
    async with sandbox.open_session("worker") as session:
        in_session = await session.run(code)
        after = await session.run("return 1")
    assert inprocess.error is not None and inprocess.error.kind == "syntax", inprocess
    assert worker.error == inprocess.error and in_session.error == inprocess.error, (worker, in_session)
    assert in_session.reset is None and after.ok  # a syntax error keeps the session
