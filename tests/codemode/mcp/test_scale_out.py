"""Acceptance: ``codemode mcp serve`` replicas behind haproxy, tried the way an operator would.

Three replicas (worker backend) and haproxy (from Debian's packages; ``.ci/run`` installs it)
on loopback ports, 32 concurrent official ``mcp`` clients, in both modes of ``docs/deploy.md``:

- **stateless**: ``--stateless`` replicas behind plain round-robin, clients on both protocol
  eras; every answer is checked against the call that asked for it.
- **sessions**: ``--sessions`` replicas, sticky on the ``Mcp-Session-Id`` response header with
  redispatch; every client keeps a counter in its session and checks it call by call.

Under load, one replica is killed with SIGKILL and restarted, then another gets SIGTERM while
runs are in flight. Checked: every run in flight on the drained replica finishes and it exits 0;
the killed replica's clients get an error within seconds and carry on after reconnecting; in
stateless mode nobody else sees an error, and in sessions mode only the drained replica's own
clients do (told their session ended) after their last run finished; no process outlives its
replica; the restarted replica takes traffic again. Every load loop is bounded in calls and
time.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(420)]

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
TOOLS = HERE / "replica_tools.py"
CLIENTS = 32
#: Seconds each run naps in its tool call. The drain starts once a run has been napping on the
#: drained replica for at most `FRESH` seconds (its marker file, `replica_tools.py`): admitted,
#: and still napping when SIGTERM arrives, however slowly a loaded machine admitted it.
NAP = 0.4
FRESH = 0.15
#: Per-client bounds: calls made, and seconds of load overall.
MAX_CALLS = 60
LOAD_LIMIT = 150.0
#: Calls every client makes after the last event, to show it carries on.
CALLS_AFTER = 2
#: Seconds within which a killed replica's clients must have seen their error.
ERROR_WITHIN = 20.0
CALL_LIMIT = 60.0
DRAIN_TIMEOUT = 30


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def descendants(pid: int) -> set[int]:
    """Live processes under ``pid`` (from /proc), zombies excluded."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.add(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2:].split()[0] != "Z"


@dataclass
class Replica:
    name: str
    port: int
    flags: tuple[str, ...]
    log: Path
    naps: Path
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {**os.environ, "CODEMODE_TEST_REPLICA": self.name, "CODEMODE_TEST_NAPS": str(self.naps)}
        argv = [sys.executable, "-m", "codemode.mcp", "serve", "--tools", str(TOOLS),
                "--http", f"127.0.0.1:{self.port}", "--max-concurrent", "32",
                "--drain-timeout", str(DRAIN_TIMEOUT), *self.flags]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(argv, cwd=REPO, env=env, stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=log)

    def napping(self, fresh: float) -> bool:
        """A run on this replica started napping at most ``fresh`` seconds ago and still naps."""
        now = time.time()
        for marker in self.naps.glob(f"{self.name}.*"):
            try:
                if now - marker.stat().st_mtime <= fresh:
                    return True
            except FileNotFoundError:
                pass  # that nap just ended
        return False

    async def ready(self, limit: float = 90) -> None:
        url = f"http://127.0.0.1:{self.port}/readyz"
        with anyio.fail_after(limit):
            async with httpx2.AsyncClient(timeout=5) as http:
                while True:
                    assert self.proc is not None and self.proc.poll() is None, self.log.read_text()
                    try:
                        if (await http.get(url)).status_code == 200:
                            return
                    except httpx2.TransportError:
                        pass
                    await anyio.sleep(0.1)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


HAPROXY = """
global
    maxconn 1024
    log stderr format raw local0 info
defaults
    mode http
    log global
    option httplog
    timeout connect 2s
    timeout client 120s
    timeout server 120s
    timeout http-request 10s
    option redispatch
    retries 3
    retry-on conn-failure 503
frontend mcp
    bind 127.0.0.1:{port}
    default_backend replicas
backend replicas
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    timeout check 5s
{sticky}
{servers}
"""
STICKY = """    stick-table type string len 64 size 100k expire 30m
    stick on req.hdr(mcp-session-id)
    stick store-response res.hdr(mcp-session-id)"""


@dataclass
class Calls:
    """What the clients saw, for the checks at the end."""

    ok: int = 0
    errors: list[tuple[int, float, str, str | None]] = field(default_factory=list)  # client, when, what, replica
    wrong: list[str] = field(default_factory=list)
    served_by: dict[str, list[float]] = field(default_factory=dict)
    finished: set[int] = field(default_factory=set)


def _leaf(exc: BaseException) -> str:
    """The innermost error of an exception group, as one line."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    detail = getattr(exc, "error", None)
    return f"{type(exc).__name__}: {exc}" + (f" ({detail!r})" if detail is not None else "")


async def _client(i: int, url: str, sessions: bool, calls: Calls, clock: dict[str, float], stop_at: float) -> None:
    """One client's bounded loop: run_code calls whose answers are checked, reconnecting after
    an error; it stops once it made ``CALLS_AFTER`` calls after the last event."""
    legacy = sessions or i % 2 == 0
    made = after = 0
    replica: str | None = None
    while made < MAX_CALLS and time.monotonic() < stop_at and after < CALLS_AFTER:
        try:
            async with Client(url, mode="legacy" if legacy else "auto") as client:
                counter = 0
                while made < MAX_CALLS and time.monotonic() < stop_at and after < CALLS_AFTER:
                    made += 1
                    if "done" in clock:
                        after += 1
                    if sessions:
                        code = (f"try:\n    n += 1\nexcept NameError:\n    n = 1\n"
                                f"await tools.nap(seconds={NAP})\nreturn [n, await tools.whoami()]")
                    else:
                        code = f"await tools.nap(seconds={NAP})\nreturn ['{i}-{made}', await tools.whoami()]"
                    with anyio.fail_after(CALL_LIMIT):
                        result = await client.call_tool("run_code", {"code": code, "description": "Load"})
                    text = "\n".join(b.text for b in result.content if b.type == "text")
                    if result.is_error:
                        calls.errors.append((i, time.monotonic(), text[:200], replica))
                        break  # reconnect
                    got, who = json.loads(text)
                    expected = counter + 1 if sessions else f"{i}-{made}"
                    if got != expected:
                        calls.wrong.append(f"client {i} call {made}: expected {expected!r}, got {got!r} from {who}")
                    counter = got if sessions else counter
                    replica = who
                    calls.served_by.setdefault(who, []).append(time.monotonic())
                    calls.ok += 1
        except Exception as exc:  # the transport broke (a killed replica, a lost session)
            calls.errors.append((i, time.monotonic(), _leaf(exc)[:300], replica))
            await anyio.sleep(0.2)
    if after >= CALLS_AFTER:
        calls.finished.add(i)


async def _operate(mode: str, tmp: Path) -> None:
    sessions = mode == "sessions"
    flags = ("--sessions", "--max-sessions", "40", "--session-memory-budget", "32768") if sessions else ("--stateless",)
    naps = tmp / f"{mode}-naps"
    naps.mkdir()
    replicas = [Replica(f"r{n}", free_port(), flags, tmp / f"{mode}-r{n}.log", naps) for n in range(1, 4)]
    lb_port = free_port()
    servers = "\n".join(f"    server {r.name} 127.0.0.1:{r.port} check inter 500ms fall 2 rise 2" for r in replicas)
    config = tmp / f"{mode}-haproxy.cfg"
    config.write_text(HAPROXY.format(port=lb_port, sticky=STICKY if sessions else "", servers=servers))
    haproxy = None
    try:
        for r in replicas:
            r.start()
        haproxy = subprocess.Popen(["haproxy", "-db", "-f", str(config)], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=open(tmp / f"{mode}-haproxy.log", "wb"))
        for r in replicas:
            await r.ready()
        await anyio.sleep(1.5)  # haproxy's checks see every replica up (rise 2, inter 300ms)
        assert haproxy.poll() is None, (tmp / f"{mode}-haproxy.log").read_text()
        url = f"http://127.0.0.1:{lb_port}/mcp"
        calls = Calls()
        clock: dict[str, float] = {}
        killed, drained = replicas[0], replicas[1]
        stop_at = time.monotonic() + LOAD_LIMIT
        async with anyio.create_task_group() as tg:
            for i in range(CLIENTS):
                tg.start_soon(_client, i, url, sessions, calls, clock, stop_at)
            with anyio.fail_after(LOAD_LIMIT):
                while calls.ok < CLIENTS * 2:  # everyone is up and running
                    await anyio.sleep(0.05)
                # SIGKILL one replica under load, then restart it.
                assert killed.proc is not None
                tree = descendants(killed.proc.pid)
                assert tree, "a worker-backend replica has its worker template below it"
                clock["kill"] = time.monotonic()
                killed.proc.send_signal(signal.SIGKILL)
                killed.proc.wait()
                while any(alive(p) for p in tree):
                    await anyio.sleep(0.05)
                clock["gone"] = time.monotonic()
                killed.start()  # it comes back while the next replica drains
                # SIGTERM another while runs are in flight.
                assert drained.proc is not None
                tree = descendants(drained.proc.pid)
                before = len(calls.served_by.get(drained.name, []))
                while len(calls.served_by.get(drained.name, [])) < before + 3:
                    await anyio.sleep(0.02)
                # Wait for a run that is napping there now, so "its answers kept coming after
                # SIGTERM" does not depend on whether a request happened to be in flight.
                while not drained.napping(FRESH):
                    await anyio.sleep(0.01)
                clock["term"] = time.monotonic()
                drained.proc.send_signal(signal.SIGTERM)
                while drained.proc.poll() is None:
                    await anyio.sleep(0.05)
                clock["exited"] = time.monotonic()
                assert drained.proc.returncode == 0, drained.log.read_text()
                while any(alive(p) for p in tree):
                    await anyio.sleep(0.05)
                await killed.ready()
                await anyio.sleep(1.5)  # haproxy sees it up again (rise 2)
                clock["back"] = clock["done"] = time.monotonic()
        _check(mode, calls, clock, killed, drained)
    finally:
        for r in replicas:
            r.stop()
        if haproxy is not None:
            haproxy.kill()
            haproxy.wait()


def _check(mode: str, calls: Calls, clock: dict[str, float], killed: Replica, drained: Replica) -> None:
    report = f"{mode}: {calls.ok} ok, errors {calls.errors[:6]}, clock {clock}"
    assert calls.wrong == [], calls.wrong[:5]
    assert calls.finished == set(range(CLIENTS)), f"clients that did not carry on: {set(range(CLIENTS)) - calls.finished}; {report}"
    assert calls.ok >= CLIENTS * (2 + CALLS_AFTER), report
    # The drained replica finished every run it had: its answers kept coming after SIGTERM.
    assert any(clock["term"] <= t for t in calls.served_by[drained.name]), report
    # The restarted replica rejoined (round-robin gives it calls; sticky clients may stay put).
    if mode == "stateless":
        assert any(t > clock["back"] for t in calls.served_by[killed.name]), report
    for client, when, what, replica in calls.errors:
        in_window = clock["kill"] <= when <= clock["kill"] + ERROR_WITHIN
        if in_window and (mode == "stateless" or replica in (killed.name, None)):
            # A call in flight on the killed replica (round-robin: whichever client had one), or
            # in sessions mode a client whose session lived there: told within seconds.
            continue
        if mode == "sessions" and replica == drained.name and when >= clock["term"]:
            continue  # its session ended with the drained replica, after its last run finished
        raise AssertionError(f"client {client} saw an error it should not have: {what!r} at "
                             f"{when - clock['kill']:+.2f} s from the kill (replica {replica}); {report}")
    if mode == "sessions":
        noticed = {e[0] for e in calls.errors if e[3] == killed.name}
        assert noticed, f"no client of the killed replica noticed; {report}"


@pytest.mark.parametrize("mode", ["stateless", "sessions"])
async def test_replicas_behind_haproxy_survive_a_kill_and_a_drain(mode: str, tmp_path: Path) -> None:
    if shutil.which("haproxy") is None:
        pytest.skip("haproxy is not installed (.ci/run installs it from Debian's packages)")
    await _operate(mode, tmp_path)
