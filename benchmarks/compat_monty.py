"""Compatibility against Monty's own test suite: how much of it runs unchanged on codemode.

Downloads the `pydantic-monty-runtime` sdist from PyPI at run time into a cache outside the
repository (never commit the cases; they are MIT-licensed, but not ours), runs every program
in `crates/monty/test_cases` as a snippet on the worker backend, and the same program in the
same wrapping on plain CPython (in a fresh subprocess per case), then prints pass % and strict
pass % (exception messages must match too) with the causes of every codemode failure.

The wrapping: the program becomes the body of an async function, `global` names are hoisted
into it, and a final bare expression is the result; for a `# Return=` case the final
expression is compared through its `repr`, in both runs. A case passes when it behaves as its
expectation says: no exception, the expected exception type (`# Raise=` or a `TRACEBACK:`
block), or the expected repr. Strict: the exception message matches too.

Out of the denominator, with their counts printed: cases that need what a sandbox must refuse
(host functions `call-external`, a mounted file system, modules such as `os`/`sys`, `open`,
`eval`/`exec`, `globals()`), Monty-only expectations (`xfail = ['cpython']`), and cases plain
CPython 3.11 fails in this wrapping.

    python benchmarks/compat_monty.py [--version 1.4.0] [--cache DIR] [--only PREFIX] [-v]
"""

from __future__ import annotations

import argparse
import ast
import collections
import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

import sandbox

PACKAGE = "pydantic-monty-runtime"
CASES_DIR = "crates/monty/test_cases"

#: Modules and builtins a sandbox refuses by design (files, processes, interpreter state).
REFUSED_MODULES = frozenset(
    {"os", "sys", "subprocess", "socket", "threading", "importlib", "builtins", "inspect", "gc",
     "ctypes", "signal", "shutil", "tempfile", "weakref", "io_open", "tools", "pickle"}
)
REFUSED_CALLS = frozenset({"open", "exec", "eval", "compile", "globals", "locals", "input", "breakpoint", "__import__"})


@dataclass
class Case:
    name: str
    source: str
    meta: dict[str, str]
    kind: str  # "ok" | "raise" | "return"
    exc_type: str = ""
    exc_message: str = ""
    expected_repr: str = ""


@dataclass
class Outcome:
    ok: bool  # the program finished
    value: Any = None
    exc_type: str = ""
    exc_message: str = ""
    refused: str = ""  # the sandbox refused before running (policy)


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "codemode" / "compat-monty"


def fetch_cases(version: str | None, cache: Path) -> tuple[str, Path]:
    """The cases directory of the sdist in the cache, downloading it the first time."""
    with urllib.request.urlopen(f"https://pypi.org/pypi/{PACKAGE}/json", timeout=60) as r:
        info = json.load(r)
    version = version or info["info"]["version"]
    files = info["urls"] if version == info["info"]["version"] else info["releases"][version]
    sdist = next(u for u in files if u["packagetype"] == "sdist")
    target = cache / version
    cases = target / CASES_DIR
    if cases.is_dir():
        return version, cases
    target.mkdir(parents=True, exist_ok=True)
    url = sdist["url"]
    if url.startswith("../"):
        url = "https://pypi.org/" + url.lstrip("./")
    with urllib.request.urlopen(url, timeout=120) as r:
        data = r.read()
    if hashlib.sha256(data).hexdigest() != sdist["digests"]["sha256"]:
        raise SystemExit("the downloaded sdist does not match PyPI's sha256")
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "sdist.tar.gz"
        archive.write_bytes(data)
        with tarfile.open(archive) as tar:
            prefix = f"{tar.getnames()[0].split('/')[0]}/{CASES_DIR}/"
            members = [m for m in tar.getmembers() if m.name.startswith(prefix) and m.isfile()
                       and m.name.endswith(".py") and ".." not in m.name]
            cases.mkdir(parents=True, exist_ok=True)
            for m in members:
                src = tar.extractfile(m)
                if src is not None:
                    (cases / Path(m.name).name).write_bytes(src.read())
    return version, cases


_RAISE = re.compile(r"^# Raise=(\w+)\((.*)\)\s*$", re.M)
_RETURN = re.compile(r"^# Return=(.*)$", re.M)
_TRACEBACK = re.compile(r'"""\s*\nTRACEBACK:\n(.*?)"""\s*$', re.S)


def parse_case(path: Path) -> Case:
    source = path.read_text()
    meta: dict[str, str] = {}
    block = re.search(r"^# /// monty\n(.*?)^# ///\n", source, re.S | re.M)
    if block:
        for line in block.group(1).splitlines():
            key, _, value = line.lstrip("# ").partition("=")
            meta[key.strip()] = value.strip()
    case = Case(path.stem, source, meta, "ok")
    if m := _RAISE.search(source):
        case.kind, case.exc_type = "raise", m.group(1)
        try:
            args = ast.literal_eval(f"({m.group(2)},)") if m.group(2) else ()
        except (ValueError, SyntaxError):
            args = (m.group(2),)
        case.exc_message = str(args[0]) if len(args) == 1 else (str(args) if args else "")
    elif m := _TRACEBACK.search(source):
        last = m.group(1).strip().splitlines()[-1]
        exc_type, _, message = last.partition(": ")
        case.kind, case.exc_type, case.exc_message = "raise", exc_type.split(".")[-1], message
    elif m := _RETURN.search(source):
        case.kind, case.expected_repr = "return", m.group(1)
    return case


def refusal(case: Case) -> str | None:
    """Why the case needs something a sandbox must refuse, or None."""
    if case.meta.get("call-external") == "true":
        return "host functions (call-external)"
    if case.meta.get("mount-fs") == "true":
        return "a mounted file system"
    if "cpython" in case.meta.get("xfail", ""):
        return "Monty-only expectation"
    try:
        tree = ast.parse(case.source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            for name in names:
                if name.split(".")[0] in REFUSED_MODULES:
                    return f"module {name.split('.')[0]}"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in REFUSED_CALLS:
            return f"{node.func.id}()"
    return None


def program(case: Case) -> str:
    """The case's source for both runs: a `# Return=` case returns the repr of its last
    expression."""
    if case.kind != "return":
        return case.source
    tree = ast.parse(case.source)
    last = tree.body[-1] if tree.body else None
    if not isinstance(last, ast.Expr):
        return case.source
    lines = case.source.splitlines()
    start, end = last.lineno - 1, (last.end_lineno or last.lineno) - 1
    expr = "\n".join(lines[start : end + 1])
    return "\n".join([*lines[:start], f"repr({expr.strip()})", *lines[end + 1 :]])


#: The CPython side: the same wrapping as `sandbox.policy.compile_snippet`, real builtins, and
#: the qualified names a script has (`f`, `A.m`: the wrapper's `__snippet__.<locals>.` taken out,
#: as the sandbox takes it out), so a message is compared with what CPython says of the program.
CPYTHON_RUNNER = textwrap.dedent(
    """
    import ast, asyncio, json, sys
    PREFIX = "__snippet__.<locals>."
    def script_names(code):
        consts = tuple(script_names(c) if isinstance(c, type(code)) else c for c in code.co_consts)
        name = code.co_qualname
        if name.startswith(PREFIX):
            if not code.co_flags & 2:  # a class body stores its __qualname__ as a constant
                consts = tuple(name[len(PREFIX):] if c == name else c for c in consts)
            name = name[len(PREFIX):]
        return code.replace(co_qualname=name, co_consts=consts)
    source = sys.stdin.read()
    tree = ast.parse(source)
    names = sorted({n for node in ast.walk(tree) if isinstance(node, ast.Global) for n in node.names})
    body = [s for s in tree.body if not isinstance(s, ast.Global)] or [ast.Pass()]
    if isinstance(body[-1], ast.Expr):
        body[-1] = ast.copy_location(ast.Return(value=body[-1].value), body[-1])
    if names:
        body.insert(0, ast.Global(names=names))
    fn = ast.AsyncFunctionDef(name="__snippet__", args=ast.arguments(posonlyargs=[], args=[],
        vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]), body=body,
        decorator_list=[], returns=None, type_comment=None)
    module = ast.fix_missing_locations(ast.Module(body=[fn], type_ignores=[]))
    g = {"__name__": "__snippet__"}
    out = {"ok": True}
    try:
        exec(script_names(compile(module, "<case>", "exec")), g)
        value = asyncio.run(g["__snippet__"]())
        out["value"] = value if isinstance(value, str) else None
    except BaseException as exc:
        text = exc.msg if isinstance(exc, SyntaxError) else str(exc)  # without "(<case>, line N)"
        out = {"ok": False, "type": type(exc).__name__, "message": text}
    sys.stdout.flush()
    print("\\n@@RESULT@@" + json.dumps(out))
    """
)


def run_cpython(source: str) -> Outcome:
    try:
        proc = subprocess.run([sys.executable, "-c", CPYTHON_RUNNER], input=source, capture_output=True,
                              text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return Outcome(False, exc_type="Timeout", exc_message="timed out")
    marker = proc.stdout.rfind("@@RESULT@@")
    if marker < 0:
        return Outcome(False, exc_type="Crashed", exc_message=proc.stderr[-200:])
    data = json.loads(proc.stdout[marker + len("@@RESULT@@"):])
    if data["ok"]:
        return Outcome(True, value=data.get("value"))
    return Outcome(False, exc_type=data["type"], exc_message=data["message"])


async def run_codemode(source: str, backend: str) -> Outcome:
    result = await sandbox.run(source, limits=sandbox.Limits(wall_time=20, cpu_time=20), backend=backend)  # type: ignore[arg-type]
    if result.error is None:
        return Outcome(True, value=result.value)
    if result.error.kind == "syntax":
        first = result.error.message.splitlines()[0]
        first = re.sub(r"^line \d+: ", "", first)
        if first.startswith("invalid syntax: "):
            # CPython's own compile-time SyntaxError, reported before anything runs.
            return Outcome(False, exc_type="SyntaxError", exc_message=first[len("invalid syntax: "):])
        return Outcome(False, exc_type="SandboxRefusal", exc_message=result.error.message, refused=result.error.message)
    if result.error.kind != "exception":
        return Outcome(False, exc_type=f"<{result.error.kind}>", exc_message=result.error.message)
    first = result.error.message.split("\nTraceback (most recent call last):")[0]
    exc_type, _, message = first.partition(": ")
    return Outcome(False, exc_type=exc_type, exc_message=message)


def judge(case: Case, outcome: Outcome, baseline: Outcome | None = None) -> tuple[bool, bool, str]:
    """(passes, passes strictly, why not). Strictly: the exception message is the one plain
    CPython gave in the same wrapping (the cases' own texts are CPython 3.14's)."""
    if case.kind == "raise":
        if outcome.ok:
            return False, False, f"no exception (expected {case.exc_type})"
        if outcome.exc_type != case.exc_type:
            return False, False, f"{outcome.exc_type}: {outcome.exc_message}"
        expected = baseline.exc_message if baseline is not None else case.exc_message
        if outcome.exc_message != expected:
            return True, False, f"message: {outcome.exc_message!r} != {expected!r}"
        return True, True, ""
    if not outcome.ok:
        return False, False, f"{outcome.exc_type}: {outcome.exc_message}"
    if case.kind == "return" and outcome.value != case.expected_repr:
        return False, False, f"value {outcome.value!r} != {case.expected_repr!r}"
    return True, True, ""


def cause_of(why: str) -> str:
    """Failures grouped by their first line, with the snippet line and quoted names kept short."""
    first = why.splitlines()[0]
    first = re.sub(r"^line \d+: ", "", first)
    return first[:110]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version")
    parser.add_argument("--cache", type=Path, default=default_cache())
    parser.add_argument("--only", default="", help="run only cases whose name starts with this")
    parser.add_argument("--backend", default="worker", choices=["worker", "inprocess"])
    parser.add_argument("-v", "--verbose", action="store_true", help="list every failing case")
    args = parser.parse_args()
    if str(args.cache.resolve()).startswith(str(Path(__file__).resolve().parent.parent)):
        raise SystemExit("the cache must be outside the repository")
    version, cases_dir = fetch_cases(args.version, args.cache)
    cases = [parse_case(p) for p in sorted(cases_dir.glob("*.py")) if p.stem.startswith(args.only)]
    started = time.monotonic()
    excluded: collections.Counter[str] = collections.Counter()
    cpython_fails: list[str] = []
    passed = strict = total = 0
    causes: collections.Counter[str] = collections.Counter()
    strict_causes: collections.Counter[str] = collections.Counter()
    failing: list[tuple[str, str]] = []
    for case in cases:
        why = refusal(case)
        if why:
            excluded[why.split(" ")[0] if why.startswith("module") else why] += 1
            continue
        source = program(case)
        base = run_cpython(source)
        if not judge(case, base)[0]:
            cpython_fails.append(case.name)
            continue
        total += 1
        outcome = await run_codemode(source, args.backend)
        ok, ok_strict, reason = judge(case, outcome, base)
        passed += ok
        strict += ok_strict
        if not ok:
            causes[cause_of(reason)] += 1
            failing.append((case.name, reason))
        elif not ok_strict:
            strict_causes[cause_of(reason)] += 1
            failing.append((case.name, "(strict) " + reason))
    elapsed = time.monotonic() - started
    print(f"Monty test cases ({PACKAGE} {version}): {len(cases)} cases, {sum(excluded.values())} need what a "
          f"sandbox refuses, {len(cpython_fails)} fail on plain CPython {sys.version.split()[0]} in this wrapping")
    for why, n in excluded.most_common():
        print(f"  excluded: {n:3d} {why}")
    print(f"denominator: {total} cases CPython passes")
    print("| runtime | pass | pass % | strict | strict % |\n|---|---|---|---|---|")
    print(f"| cpython {sys.version.split()[0]} | {total} | 100.0 | {total} | 100.0 |")
    pct = 100 * passed / total if total else 0.0
    spct = 100 * strict / total if total else 0.0
    print(f"| codemode ({args.backend}) | {passed} | {pct:.1f} | {strict} | {spct:.1f} |")
    print("failure causes (codemode):")
    for why, n in causes.most_common():
        print(f"  {n:3d} {why}")
    print("message mismatches (strict only):")
    for why, n in strict_causes.most_common():
        print(f"  {n:3d} {why}")
    if args.verbose:
        for name, why in failing:
            print(f"  {name}: {why.splitlines()[0][:160]}")
    print(f"({elapsed:.0f} s)")


if __name__ == "__main__":
    anyio.run(main)
