"""Shared fixtures for the adversarial sandbox suite.

Every case runs a hostile snippet and checks two things: the error (kind and a meaningful part
of the message) and the absence of the effect the snippet was after. The `secret` fixture plants
a unique token in a file (tmp_path) and in a host environment variable; a snippet that escapes
would return or print it, so `SB.assert_no_leak` looks for it in everything a run gives back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

import sandbox

MIB = 1024 * 1024
ROOT = Path(sandbox.__file__).resolve().parent.parent
ENV_NAME = "CODEMODE_SECURITY_SECRET"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Secret:
    token: str
    path: Path
    out_path: Path

    def fill(self, code: str) -> str:
        """Put the secret file's path (and a path the snippet must not create) into a snippet."""
        return (
            code.replace("SECRET_PATH", repr(str(self.path)))
            .replace("OUT_PATH", repr(str(self.out_path)))
            .replace("ENV_NAME", repr(ENV_NAME))
        )


@pytest.fixture
def secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Secret:
    token = "S3CRET-" + uuid.uuid4().hex
    path = tmp_path / "secret.txt"
    path.write_text(token + "\n")
    monkeypatch.setenv(ENV_NAME, token)
    return Secret(token=token, path=path, out_path=tmp_path / "pwned.txt")


@dataclass
class Spy:
    """A host binding that records every call it receives."""

    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = field(default_factory=list)

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((args, kwargs))
        return {"echo": list(args), "kw": kwargs}


#: Time limits for runs that must succeed: ten times what the slowest of them needs on an idle
#: machine (a chain of gathers 100,000 deep), so a busy 2-core machine still meets them.
HARMLESS_LIMITS: dict[str, Any] = {"wall_time": 60.0, "cpu_time": 60.0}


def limits(**overrides: Any) -> sandbox.Limits:
    base: dict[str, Any] = {"wall_time": 5.0, "cpu_time": 5.0, "memory": 64 * MIB}
    base.update(overrides)
    return sandbox.Limits(**base)


class SB:
    """Run helpers; one instance per test (see the `sb` fixture)."""

    def __init__(self, secret: Secret) -> None:
        self.secret = secret
        self.spy = Spy()

    async def run(
        self,
        code: str,
        *,
        backend: str = "worker",
        bindings: Mapping[str, Any] | None = None,
        docs: Mapping[str, str] | None = None,
        **limit_overrides: Any,
    ) -> sandbox.RunResult:
        if bindings is None:
            bindings = {"f": self.spy, "g": self.spy}
        return await sandbox.run(
            self.secret.fill(code),
            bindings=bindings,
            limits=limits(**limit_overrides),
            backend=backend,  # type: ignore[arg-type]
            docs=docs,
        )

    async def run_heavy(self, code: str, **kwargs: Any) -> sandbox.RunResult:
        """`run` for a run whose outcome, not its time, is the point: `HARMLESS_LIMITS`."""
        return await self.run(code, **{**HARMLESS_LIMITS, **kwargs})

    def assert_no_leak(self, result: sandbox.RunResult) -> None:
        blob = json.dumps(result.to_json())
        assert self.secret.token not in blob, f"secret leaked: {blob[:500]}"
        assert not self.secret.out_path.exists(), "the snippet created a file on the host"
        assert self.secret.path.read_text() == self.secret.token + "\n", "the secret was modified"

    def assert_error(
        self, result: sandbox.RunResult, kind: str, *fragments: str
    ) -> None:
        assert result.error is not None, f"expected {kind}, got success: {result.value!r}"
        assert result.error.kind == kind, f"expected {kind}, got {result.error}"
        for frag in fragments:
            assert frag in result.error.message, f"{frag!r} not in {result.error.message!r}"
        self.assert_no_leak(result)

    async def assert_refused(
        self, code: str, kind: str, *fragments: str, backend: str = "worker",
        docs: Mapping[str, str] | None = None,
    ) -> sandbox.RunResult:
        """Run `code`: it must end as `kind` (see `assert_error`) without calling a host binding."""
        result = await self.run(code, backend=backend, docs=docs)
        self.assert_error(result, kind, *fragments)
        assert self.spy.calls == []
        return result

    async def assert_harmless(self, code: str, expected: Any, *, backend: str = "worker") -> sandbox.RunResult:
        """Run `code`: it must succeed with exactly `expected` and leak nothing. The run is not
        about its limits, so they are ones a machine several times slower than this one meets."""
        result = await self.run_heavy(code, backend=backend)
        assert result.ok, result
        assert result.value == expected
        self.assert_no_leak(result)
        return result

    async def assert_confined_to_worker(self, poison: str, probe: str) -> sandbox.RunResult:
        """Run `poison` in a worker (it may succeed: it only dirties its own single-use process),
        then `probe` in a fresh worker; the caller checks the probe's value."""
        result = await self.run(poison, backend="worker")
        assert result.ok, result
        following = await self.run(probe, backend="worker")
        assert following.ok, following
        return following

    async def assert_next_run_ok(self, backend: str = "worker") -> None:
        result = await sandbox.run(
            "import json\nreturn json.loads(json.dumps({'n': 1 + 1}))",
            limits=limits(),
            backend=backend,  # type: ignore[arg-type]
        )
        assert result.ok, result
        assert result.value == {"n": 2}

    async def run_with_ticker(self, code: str, **kwargs: Any) -> tuple[sandbox.RunResult, int, float]:
        """Run while a host task ticks every 10 ms: the host must stay responsive."""
        ticks = 0
        result: sandbox.RunResult | None = None
        start = anyio.current_time()

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await anyio.sleep(0.01)
                ticks += 1

        async with anyio.create_task_group() as tg:
            tg.start_soon(ticker)
            result = await self.run(code, **kwargs)
            tg.cancel_scope.cancel()
        assert result is not None
        return result, ticks, anyio.current_time() - start


@pytest.fixture
def sb(secret: Secret) -> SB:
    return SB(secret)


def run_inprocess_isolated(code: str, check: str, *, timeout: float = 20.0, wall_time: float = 3.0) -> dict[str, Any]:
    """Run `code` on the in-process backend inside a fresh Python process, so that a snippet
    which corrupts host state cannot damage the pytest process. `check` is host Python run
    before (as `before`) and after (as `after`) the snippet, plus a second, innocent run; the
    child prints a JSON report. A child that does not finish in `timeout` reports `hung`."""
    script = textwrap.dedent(
        """
        import json, sys, anyio
        sys.path.insert(0, {root!r})
        import sandbox
        CHECK = {check!r}
        def probe():
            ns = {{}}
            exec(CHECK, ns)
            return ns["state"]
        async def main():
            before = probe()
            lim = sandbox.Limits(wall_time={wall!r}, cpu_time=10)
            r = await sandbox.run({code!r}, backend="inprocess", limits=lim)
            after = probe()
            nxt = await sandbox.run("import json\\nreturn json.dumps([1])", backend="inprocess", limits=lim)
            print(json.dumps({{"result": r.to_json(), "before": before, "after": after,
                              "next": nxt.to_json()}}))
        anyio.run(main)
        """
    ).format(root=str(ROOT), check=check, code=code, wall=wall_time)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={k: v for k, v in os.environ.items() if k != ENV_NAME},
        )
    except subprocess.TimeoutExpired:
        return {"hung": True}
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    report["hung"] = False
    return report


@pytest.fixture
def isolated():
    return run_inprocess_isolated


#: What a snippet does once a plant has switched off the attrgetter's name check (the host class
#: that held it as `_count` is gone: attrgetter is a prelude class reading with the snippet's
#: own getattr): read `__globals__`, then import the real `os`.
ATTRGETTER_ESCAPE = """
g = operator.attrgetter("__globals__")(getattr)
os = operator.attrgetter("__import__")(g["_builtins"])("os")
return [os.getpid(), os.environ.get(ENV_NAME)]
"""


class AttrgetterPlant:
    """Checks for gadgets that try to switch off the shim attrgetter's check: in a worker the
    escape must fail; in-process (in a child interpreter) the shared class and the host files
    must stay untouched."""

    def __init__(self, sb: SB, tmp_path: Path) -> None:
        self.sb = sb
        self.tmp_path = tmp_path

    async def assert_worker_escape_fails(self, plant: str) -> None:
        result = await self.sb.run(plant + ATTRGETTER_ESCAPE, backend="worker")
        self.sb.assert_error(result, "exception")
        await self.sb.assert_next_run_ok()

    def assert_inprocess_contained(self, plant: str) -> dict[str, Any]:
        pwned = str(self.tmp_path / "pwned-inprocess.txt")
        check = (
            "import os, operator\n"
            f"state = [sorted(vars(operator)), os.path.exists({pwned!r})]"
        )
        code = plant + f"""
g = operator.attrgetter("__globals__")(getattr)
b = operator.attrgetter("__import__")(g["_builtins"])("builtins")
b.open({pwned!r}, "w").close()
return "escaped"
"""
        report = run_inprocess_isolated(code, check)
        assert report["before"][1] is False
        assert report["after"] == report["before"], "the snippet changed the host class / wrote a host file"
        assert report["result"]["error"] is not None
        return report


@pytest.fixture
def attrgetter_plant(sb: SB, tmp_path: Path) -> AttrgetterPlant:
    return AttrgetterPlant(sb, tmp_path)
