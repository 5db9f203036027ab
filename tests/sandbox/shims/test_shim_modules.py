"""The shims package: one module per stdlib module, each naming what it stands for, saying why
in its docstring, and exposing no real module."""

from __future__ import annotations

import types

import pytest
from sandbox_helpers import run

import sandbox
from sandbox import shims
from sandbox.guards import RunGuards

MODULES = [m for m in shims._SHIM_MODULES]


@pytest.mark.parametrize("module", MODULES, ids=[m.NAME for m in MODULES])
def test_each_shim_module_names_its_module_and_says_why(module: types.ModuleType) -> None:
    assert module.NAME in sandbox.ALLOWED_MODULES
    assert module.__doc__ and len(module.__doc__) > 40
    assert hasattr(module, "build") if getattr(module, "PER_RUN", False) else hasattr(module, "attrs")


@pytest.mark.parametrize("name", sandbox.ALLOWED_MODULES)
def test_no_shim_exposes_a_real_module(name: str) -> None:
    shim = shims.ShimSet(RunGuards(), {}).get(name)
    assert isinstance(shim, shims.ModuleShim)
    for attr in dir(shim):
        assert not isinstance(getattr(shim, attr), types.ModuleType), (name, attr)


def test_time_sleep_is_bounded_by_the_wall_limit() -> None:
    result = run("import time\ntime.sleep(1000)\nreturn 1", limits=sandbox.Limits(wall_time=0.3))
    assert result.error is not None and result.error.kind == "timeout"


def test_decimal_setcontext_lasts_for_the_run() -> None:
    code = "import decimal, asyncio\ndecimal.setcontext(decimal.Context(prec=3))\nawait asyncio.sleep(0)\nreturn str(decimal.Decimal(1) / 7)"
    assert run(code).value == "0.143"


def test_urllib_parse_imports_like_python() -> None:
    code = "import urllib.parse\nfrom urllib import parse\nfrom urllib.parse import quote\nreturn [urllib.parse.quote('a b'), parse.quote('c d'), quote('e')]"
    assert run(code).value == ["a%20b", "c%20d", "e"]


def test_the_last_expression_is_the_result() -> None:
    assert run("x = 2\nx * 21").value == 42
    result = run("object()")
    assert result.ok and result.value is None
    assert "not JSON" in result.logs[-1]
