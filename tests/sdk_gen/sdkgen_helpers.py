"""Shared helpers for tests/sdk_gen: the fixture corpus, hypothesis profiles, and running SDK text as a module.

Profiles: `ci` (default, modest example counts) and `long` (select with
`HYPOTHESIS_PROFILE=long`).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import sys
import types
from pathlib import Path

from hypothesis import HealthCheck, settings

from sdk_gen import SDK, ToolSpec

settings.register_profile(
    "ci", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "long", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

FIXTURES = Path(__file__).parent / "fixtures"
_CODE = re.compile(r"```python\n(.*)```", re.S)
_counter = itertools.count()


def load_corpus() -> list[ToolSpec]:
    """Every fixture tool, as ToolSpecs, in file order."""
    tools = []
    for path in sorted(FIXTURES.glob("*.json")):
        for raw in json.loads(path.read_text()):
            tools.append(
                ToolSpec(raw["name"], raw["description"], raw["inputSchema"], raw.get("outputSchema"))
            )
    return tools


def code_of(sdk: SDK) -> str:
    """The Python block of a full SDK text."""
    match = _CODE.search(sdk.text)
    assert match, "no python block"
    return match.group(1)


def load_module(source: str, *, for_pydantic: bool = False) -> types.ModuleType:
    """Execute SDK code as a real module (pydantic resolves forward refs through sys.modules).

    pydantic needs `typing_extensions.TypedDict` on Python < 3.12, so `for_pydantic` swaps the
    import line; the model-facing text keeps `typing`.
    """
    if for_pydantic:
        source = source.replace("from typing import", "from typing_extensions import", 1)
    name = f"_sdk_under_test_{next(_counter)}"
    module = types.ModuleType(name)
    sys.modules[name] = module
    exec(compile(source, f"<{name}>", "exec", dont_inherit=True), module.__dict__)
    return module
