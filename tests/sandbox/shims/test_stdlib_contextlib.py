"""`contextlib` in the sandbox behaves as CPython's on ordinary code, including the unhappy
paths (a generator that does not yield or does not stop, an exception an exit replaces, a
callback that raises, an object that is no context manager), on both backends."""

from __future__ import annotations

import pytest
from sandbox_helpers import run

CASES = {
    "suppress": (
        "from contextlib import suppress\nout = []\n"
        "with suppress(KeyError, IndexError):\n    [][1]\nout.append('after')\n"
        "try:\n    with suppress(KeyError):\n        raise ValueError('v')\nexcept ValueError as e:\n    out.append(str(e))\n"
        "with suppress():\n    out.append('none')\nreturn out",
        ["after", "v", "none"],
    ),
    "contextmanager": (
        "from contextlib import contextmanager\nlog = []\n"
        "@contextmanager\ndef cm(n):\n    '''Doc.'''\n    log.append('in')\n    try:\n        yield n + 1\n"
        "    except KeyError:\n        log.append('handled')\n    finally:\n        log.append('out')\n"
        "with cm(1) as v:\n    log.append(v)\n"
        "with cm(2):\n    raise KeyError('k')\n"
        "try:\n    with cm(3):\n        raise ValueError('passes')\nexcept ValueError as e:\n    log.append(str(e))\n"
        "return [log, cm.__name__]",
        [["in", 2, "out", "in", "handled", "out", "in", "out", "passes"], "cm"],
    ),
    "contextmanager-as-decorator": (
        "from contextlib import contextmanager\nlog = []\n"
        "@contextmanager\ndef tag(t):\n    log.append('<' + t)\n    yield\n    log.append(t + '>')\n"
        "@tag('b')\ndef body():\n    log.append('body')\n    return 7\n"
        "return [body(), body(), log]",
        [7, 7, ["<b", "body", "b>", "<b", "body", "b>"]],
    ),
    "contextmanager-unhappy": (
        "from contextlib import contextmanager\nout = []\n"
        "@contextmanager\ndef none():\n    if False:\n        yield\n"
        "@contextmanager\ndef twice():\n    yield 1\n    yield 2\n"
        "@contextmanager\ndef swallow_then_yield():\n    try:\n        yield\n    except Exception:\n        yield\n"
        "for f in (none, twice, swallow_then_yield):\n    try:\n        with f():\n            if f is swallow_then_yield:\n"
        "                raise ValueError('x')\n    except RuntimeError as e:\n        out.append(str(e))\n"
        "return out",
        ["generator didn't yield", "generator didn't stop", "generator didn't stop after throw()"],
    ),
    "asynccontextmanager": (
        "import asyncio\nfrom contextlib import asynccontextmanager\nlog = []\n"
        "@asynccontextmanager\nasync def conn(name):\n    await asyncio.sleep(0)\n    log.append('open ' + name)\n"
        "    try:\n        yield name.upper()\n    finally:\n        log.append('close ' + name)\n"
        "async with conn('a') as c:\n    log.append(c)\n"
        "try:\n    async with conn('b'):\n        raise KeyError('boom')\nexcept KeyError:\n    log.append('caught')\n"
        "return log",
        ["open a", "A", "close a", "open b", "close b", "caught"],
    ),
    "exitstack": (
        "from contextlib import ExitStack, contextmanager\nlog = []\n"
        "@contextmanager\ndef res(n):\n    log.append(f'+{n}')\n    yield n\n    log.append(f'-{n}')\n"
        "with ExitStack() as stack:\n    got = [stack.enter_context(res(i)) for i in range(3)]\n"
        "    stack.callback(log.append, 'callback')\n    stack.push(lambda *exc: log.append('push') and False)\n"
        "log.append(got)\n"
        "with ExitStack() as stack:\n    stack.enter_context(res(9))\n    later = stack.pop_all()\n"
        "log.append('popped')\nlater.close()\nreturn log",
        ["+0", "+1", "+2", "push", "callback", "-2", "-1", "-0", [0, 1, 2], "+9", "popped", "-9"],
    ),
    "exitstack-exceptions": (
        "from contextlib import ExitStack\nout = []\n"
        "def boom(*exc):\n    raise ValueError('from exit')\n"
        "def swallow(*exc):\n    return True\n"
        "try:\n    with ExitStack() as stack:\n        stack.push(boom)\n        raise KeyError('body')\n"
        "except ValueError as e:\n    out.append([str(e), type(e.__context__).__name__])\n"
        "with ExitStack() as stack:\n    stack.push(swallow)\n    raise KeyError('swallowed')\n"
        "out.append('went on')\n"
        "try:\n    ExitStack().enter_context(42)\nexcept TypeError as e:\n    out.append(str(e))\n"
        "return out",
        [["from exit", "KeyError"], "went on",
         "'builtins.int' object does not support the context manager protocol"],
    ),
    "asyncexitstack": (
        "import asyncio\nfrom contextlib import AsyncExitStack, asynccontextmanager\nlog = []\n"
        "@asynccontextmanager\nasync def res(n):\n    log.append(f'+{n}')\n    yield n\n    log.append(f'-{n}')\n"
        "async def cb(x):\n    await asyncio.sleep(0)\n    log.append(x)\n"
        "async with AsyncExitStack() as stack:\n    a = await stack.enter_async_context(res(1))\n"
        "    stack.push_async_callback(cb, 'acb')\n    stack.callback(log.append, 'sync')\n"
        "try:\n    await AsyncExitStack().enter_async_context(object())\nexcept TypeError as e:\n    log.append('not async cm')\n"
        "return log",
        ["+1", "sync", "acb", "-1", "not async cm"],
    ),
    "nullcontext-closing-aclosing": (
        "from contextlib import nullcontext, closing, aclosing\nlog = []\n"
        "class Res:\n    def close(self):\n        log.append('closed')\n    async def aclose(self):\n        log.append('aclosed')\n"
        "with nullcontext(5) as v:\n    log.append(v)\nasync with nullcontext() as w:\n    log.append(w)\n"
        "with closing(Res()) as r:\n    log.append(type(r).__name__)\n"
        "async with aclosing(Res()):\n    pass\n"
        "async def gen():\n    try:\n        yield 1\n        yield 2\n    finally:\n        log.append('gen closed')\n"
        "async with aclosing(gen()) as g:\n    async for x in g:\n        break\n"
        "return log",
        [5, None, "Res", "closed", "aclosed", "gen closed"],
    ),
    "abstract-bases": (
        "import contextlib\nclass Mine(contextlib.AbstractContextManager):\n    def __exit__(self, *exc):\n        return None\n"
        "with Mine() as m:\n    pass\nreturn [type(m).__name__, repr(contextlib.suppress).startswith(\"<class 'contextlib.suppress'\")]",
        ["Mine", True],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_contextlib_behaves_as_in_cpython(name: str, backend: str) -> None:
    code, expected = CASES[name]
    result = run(code, backend)
    assert result.error is None, result.error
    assert result.value == expected


def test_a_failing_context_shows_only_snippet_lines(backend: str) -> None:
    code = (
        "from contextlib import contextmanager\n"
        "@contextmanager\ndef cm():\n    yield\n    raise ValueError('after yield')\n"
        "with cm():\n    pass\n"
    )
    result = run(code, backend)
    assert result.error is not None and result.error.kind == "exception"
    message = result.error.message
    assert message.startswith("ValueError: after yield")
    assert "line 5, in cm" in message and "line 6, in <snippet>" in message
    assert "prelude" not in message
