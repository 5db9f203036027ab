"""The language models write: everything the issue lists runs the same on both backends."""

from __future__ import annotations

import pytest
from sandbox_helpers import run

CASES = {
    "comprehensions": ("return [x * 2 for x in range(4) if x], {k: 1 for k in 'ab'}, {1} == {1}",
                       [[2, 4, 6], {"a": 1, "b": 1}, True]),
    "generators": ("def g(n):\n    for i in range(n):\n        yield i * i\nreturn sum(g(4)), list(x for x in g(3))",
                   [14, [0, 1, 4]]),
    "lambda-closure": ("def mk(n):\n    return lambda x: x + n\nadd = mk(3)\nreturn add(4)", 7),
    "nonlocal": ("def counter():\n    n = 0\n    def inc():\n        nonlocal n\n        n += 1\n        return n\n    return inc\nc = counter()\nc(); c()\nreturn c()", 3),
    "global": ("total = 0\ndef add(v):\n    global total\n    total += v\nadd(2); add(5)\nreturn total", 7),
    "classes": ("class P:\n    def __init__(self, x):\n        self.x = x\n    def __repr__(self):\n        return f'P({self.x})'\n    def __eq__(self, o):\n        return self.x == o.x\n    def __len__(self):\n        return self.x\nclass Q(P):\n    def __init__(self):\n        super().__init__(9)\nreturn [repr(P(1)), P(2) == P(2), len(Q())]",
                ["P(1)", True, 9]),
    "try-except-finally": ("out = []\ntry:\n    1 / 0\nexcept ZeroDivisionError as e:\n    out.append(type(e).__name__)\nelse:\n    out.append('no')\nfinally:\n    out.append('fin')\nreturn out",
                           ["ZeroDivisionError", "fin"]),
    "fstrings": ("x = 3.14159\nreturn f'{x:.2f}|{x!r:>10}|{\"a\"}'", "3.14|   3.14159|a"),
    "str-format": ("return '{} {name} {}'.format('a', 'a', name='b'), '{k}'.format_map({'k': 1}), str.format('{}', 2)",
                   ["a b a", "1", "2"]),
    "slicing-unpacking": ("a, *b, c = range(5)\nd = {**{'x': 1}, 'y': 2}\nreturn b, c, [1, 2, 3][::-1], d, [*b, *'xy']",
                          [[1, 2, 3], 4, [3, 2, 1], {"x": 1, "y": 2}, [1, 2, 3, "x", "y"]]),
    "walrus": ("if (n := 5) > 3:\n    return n", 5),
    "builtins": ("return [len('ab'), list(range(2)), list(enumerate('a')), list(zip('a', 'b')), sorted([3, 1]), list(reversed([1, 2])), min(2, 1), max([1, 5]), sum([1, 2]), any([0, 1]), all([]), list(map(str, [1])), list(filter(None, [0, 2])), abs(-1), round(2.5), divmod(7, 2), pow(2, 3), isinstance(1, int), issubclass(bool, int), dict(a=1), set() == set(), frozenset() == frozenset(), tuple([1]), str(1), int('2'), float('1.5'), bool(0), bytes(2) == b'\\x00\\x00', repr('a'), hash(1) == hash(1), next(iter([4]))]",
                 [2, [0, 1], [[0, "a"]], [["a", "b"]], [1, 3], [2, 1], 1, 5, 3, True, True, ["1"], [2], 1, 2, [3, 1], 8, True, True, {"a": 1}, True, True, [1], "1", 2, 1.5, False, True, "'a'", True, 4]),
    "big-range": ("return len(list(range(100_000)))", 100_000),
    "type-subscript": ("def close(exc_type: type[BaseException] | None = None) -> type[int]:\n    return int\n"
                       "alias = type[int]\nreturn [str(alias), str(close.__annotations__['exc_type']), "
                       "alias(3) is int, close() is int]",
                       ["type[int]", "type[BaseException] | None", True, True]),
    "type-one-arg": ("return [type(1).__name__, type(1) is int, isinstance(int, type)]", ["int", True, True]),
    "exceptions": ("try:\n    raise KeyError('k')\nexcept LookupError as e:\n    return str(e)", "'k'"),
    "dataclass": ("from dataclasses import dataclass, field, asdict\n@dataclass\nclass Row:\n    name: str\n    tags: list = field(default_factory=list)\nreturn asdict(Row('a'))",
                  {"name": "a", "tags": []}),
    "enum": ("from enum import Enum\nclass Color(Enum):\n    RED = 1\n    BLUE = 2\nreturn [c.name for c in Color]", ["RED", "BLUE"]),
    "typeddict-namedtuple": ("from typing import TypedDict, NamedTuple\nclass R(TypedDict):\n    a: int\nclass P(NamedTuple):\n    x: int\n    y: int = 0\nreturn [R(a=1), P(1)._asdict(), list(P(1))]",
                             [{"a": 1}, {"x": 1, "y": 0}, [1, 0]]),
    # In-process runs add a budget tick to each function body, after its docstring.
    "docstrings": ("def f():\n    \"\"\"Add.\"\"\"\n    return 1\nasync def g():\n    \"\"\"Wait.\"\"\"\n"
                   "class C:\n    \"\"\"A C.\"\"\"\n    def m(self):\n        \"\"\"Em.\"\"\"\n"
                   "def h():\n    return 2\nreturn [f.__doc__, g.__doc__, C.__doc__, C.m.__doc__, h.__doc__, f(), h()]",
                   ["Add.", "Wait.", "A C.", "Em.", None, 1, 2]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_language(name: str, backend: str) -> None:
    code, expected = CASES[name]
    result = run(code, backend)
    assert result.error is None, result.error
    assert result.value == expected


IMPORTS = {
    "binascii": "import binascii\nreturn binascii.hexlify(b'hi').decode()",
    "calendar": "import calendar\nreturn calendar.monthrange(2024, 2)[1]",
    "csv": "import csv, io\nreturn list(csv.reader(io.StringIO('a,\"b,c\"\\n')))",
    "fnmatch": "import fnmatch\nreturn fnmatch.filter(['a.py', 'b.txt'], '*.py')",
    "graphlib": "import graphlib\nreturn list(graphlib.TopologicalSorter({'b': {'a'}}).static_order())",
    "html": "import html\nreturn html.escape('<a&b>')",
    "io": "import io\nb = io.BytesIO()\nb.write(b'xy')\nreturn b.getvalue().decode()",
    "numbers": "import numbers\nreturn [isinstance(1, numbers.Integral), isinstance(1.5, numbers.Integral)]",
    "pathlib": "import pathlib\nreturn [str(pathlib.Path('a') / 'b.txt'), pathlib.PurePath('x/y.tar.gz').suffixes]",
    "pprint": "import pprint\nreturn pprint.pformat({'b': 1, 'a': 2})",
    "secrets": "import secrets\nreturn len(secrets.token_hex(8))",
    "shlex": "import shlex\nreturn shlex.split(\"a 'b c'\")",
    "struct": "import struct\nreturn list(struct.unpack('<HH', struct.pack('<HH', 1, 2)))",
    "tomllib": "import tomllib\nreturn tomllib.loads('a = [1, 2]')",
    "urllib": "import urllib.parse\nreturn urllib.parse.urlencode({'q': 'a b'})",
    "urllib.parse": "from urllib.parse import urlsplit\nreturn urlsplit('http://h/p?q=1').query",
    "zlib": "import zlib\nreturn zlib.decompress(zlib.compress(b'abc')).decode()",
    "zoneinfo": "import zoneinfo\nreturn str(zoneinfo.ZoneInfo('UTC'))",
    "json": "import json\nreturn json.loads(json.dumps({'a': [1]}))",
    "math": "import math\nreturn math.floor(math.sqrt(17))",
    "re": "import re\nreturn re.findall(r'\\d+', 'a1b22')",
    "datetime": "from datetime import date, datetime, timedelta\nreturn str(date(2020, 1, 1) + timedelta(days=1)) if datetime.strptime('2020', '%Y').year == 2020 else None",
    "time": "import time\nreturn time.time() > 0 and time.monotonic() >= 0 and time.strptime('2020', '%Y').tm_year == 2020",
    "itertools": "import itertools\nreturn list(itertools.islice(itertools.count(), 3))",
    "functools": "from functools import reduce, lru_cache\n@lru_cache\ndef f(n):\n    return n * 2\nreturn reduce(lambda a, b: a + b, [1, 2, 3]) + f(1)",
    "collections": "from collections import Counter, defaultdict, deque\nd = defaultdict(int)\nd['a'] += 1\nreturn [Counter('aab').most_common(1), dict(d), list(deque([1, 2], maxlen=1))]",
    "statistics": "import statistics\nreturn statistics.median([3, 1, 2])",
    "random": "import random\nrandom.seed(1)\nr = random.Random(1)\nreturn random.random() == r.random()",
    "string": "import string\nreturn string.Template('$a!').substitute(a='hi') + string.digits[:2]",
    "textwrap": "import textwrap\nreturn textwrap.shorten('hello world again', width=12)",
    "decimal": "from decimal import Decimal\nreturn str(Decimal('0.1') + Decimal('0.2'))",
    "fractions": "from fractions import Fraction\nreturn str(Fraction(1, 3) * 3)",
    "heapq": "import heapq\nreturn heapq.nsmallest(2, [5, 1, 3])",
    "bisect": "import bisect\nreturn bisect.bisect_left([1, 3, 5], 4)",
    "operator": "import operator\nreturn sorted([{'a': 2}, {'a': 1}], key=operator.itemgetter('a'))[0]",
    "copy": "import copy\nx = [[1]]\ny = copy.deepcopy(x)\ny[0].append(2)\nreturn x",
    "base64": "import base64\nreturn base64.b64encode(b'hi').decode()",
    "hashlib": "import hashlib\nreturn hashlib.sha256(b'x').hexdigest()[:8]",
    "uuid": "import uuid\nreturn len(str(uuid.uuid4()))",
    "difflib": "import difflib\nreturn difflib.get_close_matches('gerp', ['grep', 'glob'])",
    "unicodedata": "import unicodedata\nreturn unicodedata.name('a')",
    "dataclasses": "import dataclasses\nreturn dataclasses.is_dataclass(1)",
    "enum": "import enum\nreturn enum.IntEnum('N', 'A B').B.value",
    "typing": "from typing import Any, Optional\nx: Optional[int] = None\nreturn x",
    "asyncio": "import asyncio\nawait asyncio.sleep(0)\nreturn await asyncio.gather()",
    "contextlib": "import contextlib\nwith contextlib.suppress(KeyError):\n    {}['x']\nreturn 1",
    "abc": "from abc import ABC, abstractmethod\nclass A(ABC):\n    @abstractmethod\n    def f(self): ...\ntry:\n    A()\nexcept TypeError as e:\n    return 'abstract method f' in str(e)",
}

EXPECTED_IMPORTS = {
    "binascii": "6869", "calendar": 29, "csv": [["a", "b,c"]], "fnmatch": ["a.py"],
    "graphlib": ["a", "b"], "html": "&lt;a&amp;b&gt;", "io": "xy", "numbers": [True, False],
    "pathlib": ["a/b.txt", [".tar", ".gz"]],
    "pprint": "{'a': 2, 'b': 1}", "secrets": 16, "shlex": ["a", "b c"], "struct": [1, 2],
    "tomllib": {"a": [1, 2]}, "urllib": "q=a+b", "urllib.parse": "q=1", "zlib": "abc", "zoneinfo": "UTC",
    "json": {"a": [1]}, "math": 4, "re": ["1", "22"], "datetime": "2020-01-02", "time": True,
    "contextlib": 1, "abc": True, "itertools": [0, 1, 2], "functools": 8, "collections": [[["a", 2]], {"a": 1}, [2]],
    "statistics": 2, "random": True, "string": "hi!01", "textwrap": "hello [...]",
    "decimal": "0.3", "fractions": "1", "heapq": [1, 3], "bisect": 2, "operator": {"a": 1},
    "copy": [[1]], "base64": "aGk=", "hashlib": "2d711642", "uuid": 36,
    "difflib": ["grep"], "unicodedata": "LATIN SMALL LETTER A", "dataclasses": False,
    "enum": 2, "typing": None, "asyncio": [],
}


@pytest.mark.parametrize("module", sorted(IMPORTS))
def test_every_allowed_module_imports(module: str) -> None:
    result = run(IMPORTS[module])
    assert result.error is None, result.error
    assert result.value == EXPECTED_IMPORTS[module]


def test_allowed_modules_list_matches_the_issue() -> None:
    import sandbox

    assert set(sandbox.ALLOWED_MODULES) == set(IMPORTS)


def test_unknown_module_names_the_allowed_ones(backend: str) -> None:
    result = run("import os", backend)
    assert result.error is not None and result.error.kind == "exception"
    assert result.error.message.startswith("ModuleNotFoundError: module 'os' is not available in the sandbox; allowed modules: abc, asyncio, base64")


def test_from_import_of_unlisted_name() -> None:
    result = run("from json import decoder")
    assert result.error is not None
    assert "ImportError: cannot import name 'decoder' from 'json' in the sandbox" in result.error.message


def test_print_goes_to_logs(backend: str) -> None:
    result = run("print('a', 1, sep='-')\nprint('b', end='')\nprint('c')", backend)
    assert result.logs == ["a-1", "bc"]


def test_gather_runs_calls_concurrently(backend: str) -> None:
    """All 20 calls are in flight at once (counted by the host, not timed)."""
    import anyio

    in_flight = [0, 0]  # now, most ever

    async def nap(x: int) -> int:
        in_flight[0] += 1
        in_flight[1] = max(in_flight)
        await anyio.sleep(0.05)
        in_flight[0] -= 1
        return x

    result = run("import asyncio\nr = await asyncio.gather(*(tools.nap(x=i) for i in range(20)))\nreturn r",
                 backend, bindings={"nap": nap})
    assert result.value == list(range(20))
    assert in_flight == [0, 20]


def test_gather_return_exceptions_and_failures(backend: str) -> None:
    code = (
        "import asyncio\n"
        "r = await asyncio.gather(tools.echo(x=1), tools.fail(), return_exceptions=True)\n"
        "out = [r[0], type(r[1]).__name__, r[1].tool_name, r[1].message]\n"
        "try:\n    await asyncio.gather(tools.echo(x=1), tools.fail())\nexcept ToolCallError as e:\n    out.append(e.message)\n"
        "return out"
    )
    assert run(code, backend).value == [1, "ToolCallError", "fail", "no such file: notes.txt", "no such file: notes.txt"]


def test_binding_call_forms(backend: str) -> None:
    code = "return [await tools.echo(x=1), await tools.echo({'x': 2}), await tools['echo'](x=3)]"
    assert run(code, backend).value == [1, {"x": 2}, 3]


def test_unknown_binding_has_did_you_mean(backend: str) -> None:
    result = run("await tools.ecoh(x=1)", backend)
    assert result.error is not None
    assert "AttributeError: tools has no function 'ecoh'; did you mean 'echo'?" in result.error.message


def test_host_exception_text_is_not_shown(backend: str) -> None:
    result = run("try:\n    await tools.explode()\nexcept ToolCallError as e:\n    return e.message", backend)
    assert result.value == "the host function failed (RuntimeError)"
    assert "secret" not in str(result)


def test_describe_and_list_with_docs(backend: str) -> None:
    result = run("print(tools.describe('echo'))\nreturn tools.list()", backend, docs={"echo": "echo(x) -> x"})
    assert result.logs == ["echo(x) -> x"]
    assert result.value == sorted(["echo", "fail", "explode", "nap"])


def test_sleep_and_timers(backend: str) -> None:
    code = (
        "import asyncio\norder = []\n"
        "async def later(n, d):\n    await asyncio.sleep(d)\n    order.append(n)\n"
        "await asyncio.gather(later('slow', 0.05), later('fast', 0.01))\nreturn order"
    )
    assert run(code, backend).value == ["fast", "slow"]


def test_forgotten_await_is_named(backend: str) -> None:
    result = run("r = tools.echo(x=1)\nreturn r['x']", backend)
    assert result.error is not None
    assert "hint: a tool call must be awaited" in result.error.message
    assert result.logs == ["[warning] line 1: tools.echo(...) was never awaited, so it did not run"]
