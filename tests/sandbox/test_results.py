"""Results and errors: lossless JSON values, exact error shapes, snippet-only tracebacks."""

from __future__ import annotations

import pytest
from sandbox_helpers import run

from sandbox import RunError, RunResult
from sandbox.jsonvalue import NotJSONError, to_json_value


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("return {1, 2}", "the return value is not JSON: set is not JSON; convert it with sorted(...) at $"),
        ("return {'a': [1, float('nan')]}", "the return value is not JSON: nan is not JSON (NaN and infinity have no JSON form) at $[\"a\"][1]"),
        ("return {1: 'x'}", "the return value is not JSON: dict key of type int is not JSON (keys must be str) at $"),
        ("return len", "the return value is not JSON: builtin_function_or_method is not JSON (functions cannot be returned) at $"),
        ("class A:\n    pass\nreturn [A()]", "the return value is not JSON: A is not JSON; convert it to dict, list, str or a number at $[0]"),
        ("x = []\nx.append(x)\nreturn x", "the return value is not JSON: value contains a cycle (it refers to itself) at $[0]"),
        ("return b'raw'", "the return value is not JSON: bytes is not JSON; decode it to str first at $"),
    ],
    ids=["set", "nan", "int-key", "function", "object", "cycle", "bytes"],
)
def test_invalid_results(code: str, message: str, backend: str) -> None:
    result = run(code, backend)
    assert result.error == RunError("invalid-result", message)
    assert result.value is None


def test_deep_nesting_is_refused_not_crashed(backend: str) -> None:
    result = run("x = []\nfor i in range(100_000):\n    x = [x]\nreturn x", backend)
    assert result.error is not None and result.error.kind == "invalid-result"
    assert "nested deeper than 100 levels" in result.error.message


def test_repr_that_raises_does_not_break_reporting(backend: str) -> None:
    code = "class Bad:\n    def __repr__(self):\n        raise ValueError('no')\n    def __str__(self):\n        raise ValueError('no')\nreturn Bad()"
    result = run(code, backend)
    assert result.error is not None and result.error.kind == "invalid-result"
    assert "Bad is not JSON" in result.error.message


def test_json_values_round_trip(backend: str) -> None:
    code = "from collections import Counter, OrderedDict\nreturn {'t': (1, 2), 'c': Counter('aa'), 'o': OrderedDict(a=1), 'big': 2**70, 'f': 1.5, 'n': None, 'u': 'é'}"
    assert run(code, backend).value == {"t": [1, 2], "c": {"a": 2}, "o": {"a": 1}, "big": 2**70, "f": 1.5, "n": None, "u": "é"}


def test_huge_int_is_refused() -> None:
    with pytest.raises(NotJSONError, match="more than 4000 digits"):
        to_json_value(10**5000)


def test_a_path_is_written_only_for_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # Writing every item's path as it is walked cost the path's length per item: a 200,000-item
    # list under a long key took seconds of host CPU. A valid value writes none; an invalid one
    # names its part exactly.
    from sandbox import jsonvalue

    value = {"é" * 1000: [0, {"k": [1.5, "x", None]}] * 1000}
    expected = jsonvalue.to_json_value(value)

    def written(*args: object, **kwargs: object) -> str:
        raise AssertionError("a path was written for a valid value")

    with monkeypatch.context() as patched:
        patched.setattr(jsonvalue.json, "dumps", written)
        assert jsonvalue.to_json_value(value) == expected
    with pytest.raises(NotJSONError) as refused:
        to_json_value({"rows": [0, {"when\"": (1, {"deep": [set()]})}]})
    assert refused.value.path == '$["rows"][1]["when\\""][1]["deep"][0]'


def test_exception_message_has_snippet_lines_only(backend: str) -> None:
    code = "def helper(d):\n    return d['missing']\n\nx = 1\nhelper({})"
    result = run(code, backend)
    assert result.error is not None and result.error.kind == "exception"
    assert result.error.message == (
        "KeyError: 'missing'\n"
        "Traceback (most recent call last):\n"
        "  line 5, in <snippet>\n"
        "    helper({})\n"
        "  line 2, in helper\n"
        "    return d['missing']"
    )
    assert "/" not in result.error.message  # no host paths


def test_exception_from_a_guard_shows_no_host_frame(backend: str) -> None:
    result = run("getattr(1, '__globals__')", backend)
    assert result.error is not None
    assert result.error.message.splitlines()[0] == 'AttributeError: attribute "__globals__" is not accessible: names starting with "_" are private'
    assert ".py" not in result.error.message


def test_system_exit_is_a_snippet_exception(backend: str) -> None:
    result = run("raise SystemExit(3)", backend)
    assert result.error is not None and result.error.kind == "exception"
    assert result.error.message.startswith("SystemExit: 3")
    assert run("return 1", backend).value == 1


def test_logs_survive_a_failure(backend: str) -> None:
    result = run("print('step 1')\nraise ValueError('bad input')", backend)
    assert result.logs == ["step 1"]
    assert result.error is not None and result.error.message.startswith("ValueError: bad input")


def test_run_result_json_round_trip() -> None:
    r = RunResult(value={"a": 1}, logs=["x"], error=None)
    assert RunResult.from_json(r.to_json()) == r
    e = RunResult(logs=[], error=RunError("timeout", "slow"))
    assert RunResult.from_json(e.to_json()) == e and not e.ok and str(e.error) == "timeout: slow"


def test_repeated_frames_are_summarised(backend: str) -> None:
    result = run("def down(n):\n    return down(n + 1)\nreturn down(0)", backend)
    assert result.error is not None
    message = result.error.message
    assert message.count("line 2, in down") == 3
    assert "[previous frame repeated " in message
    assert len(message.splitlines()) < 20


def test_long_exception_text_is_cut(backend: str) -> None:
    result = run("raise ValueError('m' * 100_000)", backend)
    assert result.error is not None and result.error.kind == "exception"
    assert "... (98000 more characters)" in result.error.message
    assert len(result.error.message) < 3000


def test_syntax_error_does_not_repeat_itself() -> None:
    result = run("x = 1 +")
    assert result.error is not None
    assert result.error.message.startswith("line 1: invalid syntax")
    assert "invalid syntax: invalid syntax" not in result.error.message


def test_class_names_read_like_a_script(backend: str) -> None:
    code = "from dataclasses import dataclass\n@dataclass\nclass P:\n    x: int\nreturn repr(P(1))"
    assert run(code, backend).value == "P(x=1)"


def test_every_error_message_is_bounded_and_encodable() -> None:
    from sandbox.result import MAX_ERROR_MESSAGE

    error = RunError("exception", "\udc80" + "m" * (MAX_ERROR_MESSAGE + 10))
    assert error.message == "\\udc80" + "m" * (MAX_ERROR_MESSAGE - 6) + "... (16 more characters)"
    assert RunError("syntax", "short").message == "short"


def test_a_traceback_is_written_only_as_far_as_the_message_keeps_it(backend: str) -> None:
    # Each `raise e` of one exception adds an entry to its traceback, and alternating lines are
    # no repeats: the text of every entry (a 45,000-character line each) once took gigabytes
    # of host memory before the message was cut. The message shows both ends, each source line
    # cut, and counts what it leaves out; it needs no cut of its own.
    from sandbox.policy import MAX_QUOTED_LINE
    from sandbox.result import MAX_ERROR_MESSAGE

    pad = "#" + "x" * 45_000
    code = (f"e = ValueError('boom')\nfor i in range(2000):\n    try:\n        raise e  {pad}\n"
            f"    except ValueError:\n        pass\n    try:\n        raise e  {pad}\n"
            "    except ValueError:\n        pass\nraise e")
    result = run(code, backend)
    assert result.error is not None and result.error.kind == "exception", result
    message = result.error.message
    assert message.startswith("ValueError: boom\nTraceback (most recent call last):\n  line 11, in <snippet>")
    assert len(message) <= MAX_ERROR_MESSAGE and "more characters)" not in message
    assert "more traceback entries not shown]" in message
    quoted = [line for line in message.splitlines() if line.startswith("    raise e")]
    assert quoted[0] == "    raise e"  # line 11, the last raise: CPython puts it first
    assert len(quoted) > 2 and all(line == "    raise e  " + pad[: MAX_QUOTED_LINE - 9] + "..." for line in quoted[1:])
    assert message.endswith(quoted[-1])


NAMED_BY_A_STR_SUBCLASS = """
class S(str):
    def __format__(self, spec):
        raise ValueError("formatted by the host")
class C(Exception):
    pass
C.__name__ = S("C")
"""


def test_a_class_named_by_a_str_subclass_is_described_with_plain_text(backend: str) -> None:
    # A class's `__name__` may be a `str` subclass: the host's own text about the run (the
    # error's first line, a not-JSON result, the last expression's note) formatted it, which
    # ran its `__format__` as host code, and what it raised escaped `sandbox.run`.
    raised = run(NAMED_BY_A_STR_SUBCLASS + "raise C('x')", backend)
    assert raised.error is not None and raised.error.kind == "exception", raised
    assert raised.error.message.startswith("C: x\nTraceback")
    returned = run(NAMED_BY_A_STR_SUBCLASS + "return C('x')", backend)
    assert returned.error == RunError(
        "invalid-result", "the return value is not JSON: C is not JSON; convert it to dict, list, str or a number at $"
    )
    last = run(NAMED_BY_A_STR_SUBCLASS + "C('x')", backend)
    assert last.ok and last.logs and "C" in last.logs[-1], last


def test_a_long_source_line_is_quoted_as_a_window_around_the_error(backend: str) -> None:
    code = "x = [" + "1, " * 200 + "?" + ", 2" * 200 + "]"
    result = run(code, backend)
    assert result.error is not None and result.error.kind == "syntax"
    first, quoted, caret = result.error.message.split("\n")
    assert first == "line 1: invalid syntax"
    assert quoted == "    ..." + code[code.index("?") - 80 : code.index("?") + 80] + "..."
    assert caret.index("^") == quoted.index("?")


#: Generators freed in cycles whose `finally` grows the dict the program returns: the garbage
#: collector runs them whenever the host's walk over the result allocates.
GROWS_WHILE_READ = """
d = {}
for i in range(5000):
    d[str(i)] = {"v": i}
def bomb(keep):
    try:
        yield
    finally:
        d["late" + str(len(d))] = 0
def garbage():
    for _ in range(50):
        keep = []
        g = bomb(keep)
        next(g)
        keep.append(g)
await tools.collector_on()
garbage()
return d
"""


def test_a_result_changed_while_it_is_read_is_invalid_not_a_crash(backend: str) -> None:
    """A review's finalizer grew the returned dict during the walk: `sandbox.run` raised
    `RuntimeError` in-process, and a worker ended as `crashed`. Now the run ends as
    `invalid-result` with the host's text. In-process, the binding turns the collector back on
    (the garbage window pauses it while a run is live, `sandbox.garbage`), as a host may."""
    import gc

    async def collector_on() -> int:
        gc.enable()
        gc.collect()  # the count starts afresh: the step that makes the garbage starts no collection
        return 1

    result = run(GROWS_WHILE_READ, backend, bindings={"collector_on": collector_on})
    assert result.error == RunError("invalid-result", "the return value changed while it was read")
    assert result.value is None
