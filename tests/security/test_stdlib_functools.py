"""`functools.wraps`/`update_wrapper`: they write only onto the snippet's own functions, with
the stdlib's fixed names (never a caller-chosen `__code__`)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

REFUSED = [
    pytest.param("import functools, json\nfunctools.update_wrapper(json.dumps, print)\nreturn 1",
                 ["only changes the snippet's own functions"], id="host-wrapper"),
    pytest.param("import functools\ndef f():\n    pass\nfunctools.update_wrapper(f, print, assigned=('__code__',))\nreturn 1",
                 ["unexpected keyword argument 'assigned'"], id="chosen-names"),
]


@pytest.mark.parametrize(("code", "fragments"), REFUSED)
async def test_wraps_stays_on_the_snippets_own_functions(sb, code, fragments):
    result = await sb.run(code)
    sb.assert_error(result, "exception", *fragments)


async def test_update_wrapper_leaves_host_functions_unchanged(isolated):
    code = "import functools, json\ntry:\n    functools.update_wrapper(json.dumps, print)\nexcept TypeError:\n    pass\nreturn 1"
    report = isolated(code, "import json\nstate = [json.dumps.__name__, hasattr(json.dumps, '__wrapped__')]")
    assert report["before"] == ["dumps", False] and report["after"] == report["before"]
