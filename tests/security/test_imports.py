"""Imports: direct, from-imports, dotted and relative names, and shim attributes that a real
module would expose (`datetime.sys`, `json.decoder`, ...). Each snippet goes on to read the
secret file or environment variable if the import works."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]

ALLOWED_HINT = "allowed modules: abc, asyncio, base64"

DIRECT = [
    pytest.param("import os\nreturn os.environ.get(ENV_NAME)", "exception",
                 ["ModuleNotFoundError", "module 'os' is not available", ALLOWED_HINT], id="import-os"),
    pytest.param("import sys\nreturn sys.modules['os'].environ.get(ENV_NAME)", "exception",
                 ["ModuleNotFoundError", "module 'sys' is not available"], id="import-sys"),
    pytest.param("import subprocess\nreturn subprocess.check_output(['cat', SECRET_PATH])", "exception",
                 ["ModuleNotFoundError", "module 'subprocess'"], id="import-subprocess"),
    pytest.param("from os import system\nsystem('touch ' + OUT_PATH)", "exception",
                 ["ModuleNotFoundError", "module 'os'"], id="from-os-import-system"),
    pytest.param("import builtins\nreturn builtins.open(SECRET_PATH).read()", "syntax",
                 ['name "builtins" is reserved'], id="import-builtins"),
    pytest.param("import importlib\nreturn importlib.import_module('os').environ.get(ENV_NAME)", "exception",
                 ["ModuleNotFoundError", "module 'importlib'"], id="import-importlib"),
    # `io` is a shim of StringIO/BytesIO (issue 12): nothing in it opens a file.
    pytest.param("import io\nreturn io.open(SECRET_PATH).read()", "exception",
                 ["AttributeError", "module 'io' has no attribute 'open'"], id="import-io"),
    pytest.param("import io\nreturn io.FileIO(SECRET_PATH).read()", "exception",
                 ["AttributeError", "module 'io' has no attribute 'FileIO'"], id="import-io-fileio"),
    pytest.param("from io import open_code\nreturn open_code(SECRET_PATH).read()", "exception",
                 ["ImportError", "cannot import name 'open_code' from 'io'"], id="import-io-open-code"),
    pytest.param("import json.decoder\nreturn json.decoder.re", "exception",
                 ["ModuleNotFoundError", "module 'json.decoder' is not available"], id="import-dotted-submodule"),
    pytest.param("from json import decoder\nreturn decoder.scanstring('x', 0)", "exception",
                 ["ImportError", "cannot import name 'decoder' from 'json'"], id="from-json-import-decoder"),
    pytest.param("from collections import abc\nreturn str(abc)", "exception",
                 ["ImportError", "cannot import name 'abc' from 'collections'"], id="from-collections-import-abc"),
    pytest.param("from string import Formatter\nreturn Formatter().format('{0.__class__}', 1)", "exception",
                 ["ImportError", "cannot import name 'Formatter' from 'string'"], id="from-string-import-Formatter"),
    pytest.param("from typing import get_type_hints\nreturn 1", "exception",
                 ["ImportError", "cannot import name 'get_type_hints'"], id="from-typing-import-get_type_hints"),
    pytest.param("from . import os\nreturn 1", "exception",
                 ["ImportError", "relative imports are not available"], id="relative-import"),
    pytest.param("m = __import__('os')\nreturn m.environ.get(ENV_NAME)", "syntax",
                 ['"__import__"', "reserved"], id="dunder-import-call"),
    pytest.param("import _io\nreturn _io.open(SECRET_PATH).read()", "syntax",
                 ['"_io"'], id="import-underscore-module"),
    pytest.param("import ctypes\nreturn 1", "exception",
                 ["ModuleNotFoundError", "module 'ctypes'"], id="import-ctypes"),
    pytest.param("import posix\nreturn posix.environ", "exception",
                 ["ModuleNotFoundError", "module 'posix'"], id="import-posix"),
]


@pytest.mark.parametrize(("code", "kind", "fragments"), DIRECT)
async def test_direct_imports_refused(sb, code, kind, fragments):
    result = await sb.run(code)
    sb.assert_error(result, kind, *fragments)
    assert sb.spy.calls == []
    await sb.assert_next_run_ok()


SHIM_ATTRS = [
    pytest.param("import datetime\nreturn datetime.sys.modules['os'].environ.get(ENV_NAME)",
                 "module 'datetime' has no attribute 'sys'", id="datetime.sys"),
    pytest.param("import json\nreturn json.decoder.re.sys.modules['os'].environ.get(ENV_NAME)",
                 "module 'json' has no attribute 'decoder'", id="json.decoder"),
    pytest.param("import json\nreturn json.codecs.open(SECRET_PATH).read()",
                 "module 'json' has no attribute 'codecs'", id="json.codecs"),
    pytest.param("import statistics\nreturn statistics.sys.modules['os'].environ.get(ENV_NAME)",
                 "module 'statistics' has no attribute 'sys'", id="statistics.sys"),
    pytest.param("import collections\nreturn str(collections.abc)",
                 "module 'collections' has no attribute 'abc'", id="collections.abc"),
    pytest.param("import re\nreturn str(re.enum.sys)",
                 "module 're' has no attribute 'enum'", id="re.enum"),
    pytest.param("import typing\nreturn typing.sys.modules['os'].environ.get(ENV_NAME)",
                 "module 'typing' has no attribute 'sys'", id="typing.sys"),
    pytest.param("import copy\nreturn str(copy.copyreg)",
                 "module 'copy' has no attribute 'copyreg'", id="copy.copyreg"),
    pytest.param("import uuid\nreturn str(uuid.uuid1())",
                 "module 'uuid' has no attribute 'uuid1'", id="uuid.uuid1-mac-address"),
    pytest.param("import json\nreturn str(getattr(json, '__dict__'))",
                 'attribute "__dict__" is not accessible', id="getattr-shim-dict"),
    pytest.param("import json\nreturn str(getattr(json, '_shim_attrs'))",
                 'attribute "_shim_attrs" is not accessible', id="getattr-shim-private-slot"),
    pytest.param("import random\nreturn str(getattr(random, '_os'))",
                 'attribute "_os" is not accessible', id="random._os"),
    pytest.param("import asyncio\nreturn str(asyncio.get_event_loop())",
                 "module 'asyncio' has no attribute 'get_event_loop'", id="asyncio.get_event_loop"),
]


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
@pytest.mark.parametrize(("code", "fragment"), SHIM_ATTRS)
async def test_shim_attributes_lead_nowhere(sb, backend, code, fragment):
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "exception", "AttributeError", fragment)


async def test_shims_are_not_real_modules(sb):
    code = (
        "import json, math, re, datetime\n"
        "return [repr(m) for m in (json, math, re, datetime)]"
    )
    result = await sb.run(code)
    assert result.ok, result
    assert result.value[:4] == [
        "<module 'json' (sandbox)>", "<module 'math' (sandbox)>",
        "<module 're' (sandbox)>", "<module 'datetime' (sandbox)>",
    ]


# == names a real module has and its shim does not =================================================

SHIM_NAMES_ABSENT = [
    pytest.param("import string\nreturn string.Formatter", "exception",
                 ["AttributeError", "has no attribute 'Formatter'"], id="string-formatter"),
    pytest.param("import uuid\nreturn str(uuid.uuid1())", "exception", ["AttributeError", "'uuid1'"], id="uuid1"),
    pytest.param("import typing\nreturn typing.get_type_hints(int)", "exception",
                 ["AttributeError", "'get_type_hints'"], id="typing-get-type-hints"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "kind", "fragments"), SHIM_NAMES_ABSENT)
@pytest.mark.filterwarnings("ignore")
async def test_shim_names_absent_on_both_backends(sb, backend, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, backend=backend)


# Names issue 12 added (`functools.wraps`/`update_wrapper`, `decimal.getcontext`, `time.sleep`):
# each works on the snippet's own objects and reaches no host state or unchecked original.
LIFTED_NAMES = [
    pytest.param("import functools, json\nfunctools.update_wrapper(json.dumps, lambda: 0)\nreturn json.dumps.__name__",
                 "exception", ["TypeError", "only changes the snippet's own functions"], id="update-wrapper-onto-host"),
    pytest.param("import functools, json\n@functools.wraps(lambda: 0)\ndef f():\n    pass\n"
                 "functools.wraps(f)(json.loads)\nreturn json.loads.__name__",
                 "exception", ["TypeError", "only changes the snippet's own functions"], id="wraps-onto-host"),
    # The stdlib copies the wrapped object's `__dict__`: a host enum's member maps would arrive
    # as the snippet's own function attributes.
    pytest.param("import functools, re\ndef f():\n    pass\nfunctools.update_wrapper(f, type(re.I))\n"
                 "f._member_map_['IGNORECASE'] = 0\nreturn 1",
                 "exception", ["AttributeError", '"_member_map_" is not accessible'],
                 id="update-wrapper-copies-no-host-dict"),
    # The shims' checked functions wrap the real ones; `__wrapped__` does not hand those out.
    pytest.param("import re\nreturn re.sub.__wrapped__('a', 'b', 'a')", "exception",
                 ["AttributeError", "has no attribute '__wrapped__'"], id="re-sub-wrapped"),
    pytest.param("import dataclasses, json\ndataclasses.dataclass.__wrapped__(type(json))\nreturn 1", "exception",
                 ["AttributeError", "has no attribute '__wrapped__'"], id="dataclass-wrapped"),
    pytest.param("import dataclasses\nreturn str(getattr(dataclasses.asdict, '__wrapped__'))", "exception",
                 ["AttributeError", "has no attribute '__wrapped__'"], id="asdict-wrapped"),
    pytest.param("import decimal\nc = decimal.getcontext()\nreturn str(type(c).__init__)", "exception",
                 ["AttributeError", '"__init__" is not accessible'], id="decimal-getcontext-class"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "kind", "fragments"), LIFTED_NAMES)
async def test_lifted_shim_names_reach_no_host_state(sb, backend, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, backend=backend)
    await sb.assert_next_run_ok()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_time_sleep_is_bounded_by_the_wall_limit(sb, backend, monkeypatch):
    # Past the run's deadline a sleep ends the run as a timeout, however many sleeps came before
    # (a C-level `map` over sleeps passes no loop check in-process). In-process a recorder
    # around the real sleep sees what was asked of it.
    asked: list[float] = []
    if backend == "inprocess":
        import sandbox.shims.time as time_shim

        real_sleep = time_shim.time.sleep

        def recorder(seconds: float) -> None:
            asked.append(seconds)
            real_sleep(seconds)

        monkeypatch.setattr(time_shim.time, "sleep", recorder)
    code = "import time\nlist(map(time.sleep, [0.4] * 10))\nreturn 'slept'"
    result = await sb.run(code, backend=backend, wall_time=1.0)
    sb.assert_error(result, "timeout", "wall-time limit of 1 s")
    assert result.value is None
    if backend == "inprocess":
        # Two whole sleeps, then only what was left of the second (never the 0.4 s asked).
        assert len(asked) == 3 and asked[:2] == [0.4, 0.4] and 0 <= asked[2] < 0.4, asked
    result = await sb.run("import time\ntime.sleep(0)\nreturn 'ok'", backend=backend)
    assert result.ok and result.value == "ok"


INTERNAL_IMPORTS_REFUSED = {
    # _INTERNAL_IMPORTS is only for C callers
    "import_strptime": ("import _strptime\nreturn 1", "syntax", "_strptime"),
    "dunder_import": ("return __import__('_strptime')", "syntax", "__import__"),
}


# A static refusal does not depend on the backend: in-process is enough.
@pytest.mark.parametrize("backend", ["inprocess"])
@pytest.mark.parametrize("name", sorted(INTERNAL_IMPORTS_REFUSED))
async def test_internal_imports_refused(sb, name, backend):
    code, kind, fragment = INTERNAL_IMPORTS_REFUSED[name]
    await sb.assert_refused(code, kind, fragment, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_type_of_shim_builds_only_fake_modules(sb, backend):
    code = (
        "import json\nM = type(json)\nm = M('os', {'x': 1})\n"
        "try:\n    class S(type(json)):\n        def __init__(self):\n            super().__init__('json', {})\n"
        "    S()\nexcept TypeError as e:\n    err = str(e)\nelse:\n    err = 'none'\n"
        "return [m.x, repr(m), json.dumps([1]), err]"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == [1, "<module 'os' (sandbox)>", "[1]", "'ModuleShim' cannot be subclassed in the sandbox"]
