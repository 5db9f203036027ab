"""Fixtures for the sandbox tests (helpers live in sandbox_helpers.py)."""

from __future__ import annotations

import pytest
from sandbox_helpers import BACKENDS


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param
