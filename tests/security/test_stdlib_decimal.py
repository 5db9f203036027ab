"""`decimal` contexts: a snippet's `getcontext`/`setcontext`/`localcontext` change the run's own
context only; the host thread's context and `DefaultContext` stay as they were."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


async def test_context_changes_stay_in_the_run(isolated):
    code = (
        "import decimal\ndecimal.getcontext().prec = 3\ndecimal.setcontext(decimal.Context(prec=2))\n"
        "decimal.BasicContext.prec = 1\nreturn str(decimal.Decimal(1) / decimal.Decimal(3))"
    )
    report = isolated(code, "import decimal\nstate = [decimal.getcontext().prec, decimal.DefaultContext.prec, decimal.BasicContext.prec]")
    assert report["result"]["value"] == "0.33"
    assert report["before"] == [28, 28, 9] and report["after"] == report["before"]


async def test_default_context_is_not_offered(sb):
    result = await sb.run("import decimal\ndecimal.DefaultContext.prec = 1\nreturn 1")
    sb.assert_error(result, "exception", "has no attribute 'DefaultContext'")
