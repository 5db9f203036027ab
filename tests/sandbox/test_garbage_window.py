"""`sandbox.garbage`: while in-process runs are live, what they leave in reference cycles is
finalized in their own steps or when the last of them ends, never by a collection in host code,
and the process's collector is left as it was found. Each test runs in a fresh interpreter: the
window changes process-wide collector state."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import sandbox

ROOT = Path(sandbox.__file__).resolve().parent.parent

PRELUDE = """
import gc, json, sys, anyio
sys.path.insert(0, ROOT)
import sandbox
from sandbox.garbage import WINDOW

def snippet_objects():
    "Instances and classes a snippet made that are still in memory."
    return sum(1 for o in gc.get_objects()
               if getattr(type(o), "__module__", None) == "__snippet__"
               or (isinstance(o, type) and o.__module__ == "__snippet__"))

def collector():
    return [gc.get_freeze_count(), list(gc.get_threshold()), gc.isenabled(), WINDOW.runs]

CYCLES = '''
class Node:
    def __init__(self):
        self.me = self
nodes = [Node() for i in range(50)]
'''
"""


def in_fresh_interpreter(body: str) -> dict:
    """Run `body` (an async `main` that returns a JSON-able dict) after PRELUDE, in a child."""
    script = PRELUDE.replace("ROOT", repr(str(ROOT))) + textwrap.dedent(body) + (
        "\nprint(json.dumps(anyio.run(main)))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_runs_cycles_are_gone_when_the_run_returns():
    """With the host's automatic collection off, nothing but the window collects: the run's
    cycles (its class, its instances) are finalized before `sandbox.run` returns."""
    report = in_fresh_interpreter("""
    async def main():
        gc.disable()
        before = collector()
        result = await sandbox.run(CYCLES + "return len(nodes)", backend="inprocess")
        return {"value": result.value, "left": snippet_objects(), "before": before,
                "after": collector()}
    """)
    assert report["value"] == 50, report
    assert report["left"] == 0, report
    assert report["before"] == report["after"] == [0, [700, 10, 10], False, 0], report


LATE_AFTER_CLEAN_UP = '''
import functools, heapq, itertools, re
class It:
    def __iter__(self):
        return self
    def __next__(self):
        return 1
junk = [[] for _ in range(5000)]
junk = None
for i in range(9000):
    pass
keep = []
for i in range(3):
    it = It()
    later = itertools.starmap(b"a".decode, [("late-codec-%d" % i,)])
    it.close = functools.partial(next, later)
    x = heapq.merge(it)
    next(x)
    next(x)
    keep.append(x)
it = It()
it.close = functools.partial(classmethod, re.Pattern)
x = heapq.merge(it)
next(x)
next(x)
keep.append(x)
keep.append(keep)
return "ok"
'''


def test_what_the_closing_collections_finalize_is_cleaned_up_after():
    """Late code the close's collections run (a freed `heapq.merge` generator calls `close` by
    name on the snippet iterator it delegates to, here a C `functools.partial`) ran after the
    clean-up had put everything back, in a review: `encodings` kept the codec names it looked
    up (95 MB of them) and `re.Pattern` a writable `__annotations__` dict. The clean-up runs
    again after each collection that found garbage: neither is left when `run()` returns. (The
    loop before the generators lets a step's own collection start first, so the cycle is left
    for the close; `encodings` keys its cache by the normalized name, `late_codec_0`.)"""
    report = in_fresh_interpreter(f"""
    import encodings, re
    async def main():
        result = await sandbox.run({LATE_AFTER_CLEAN_UP!r}, backend="inprocess")
        return {{"value": result.value, "error": str(result.error) if result.error else None,
                 "codecs": sorted(k for k in encodings._cache if "late_codec" in k),
                 "annotations": "__annotations__" in re.Pattern.__dict__, "left": snippet_objects()}}
    """)
    assert report == {"value": "ok", "error": None, "codecs": [], "annotations": False, "left": 0}, report


def test_collections_during_a_run_take_no_reference_to_what_c_code_is_building():
    """A first version kept what a collection in host code would have freed, taking references
    inside the collector's callback: `tuple(generator)`'s result, still being built with one
    reference, could then not be resized, and CPython raised `SystemError` in the host (in the
    compiler's walk over a snippet's functions). Collections at nearly every allocation, runs
    with nested functions and a binding's own tuple building: nothing fails."""
    report = in_fresh_interpreter("""
    async def build():
        return len(tuple(str(i) for i in range(2000)))
    async def main():
        gc.set_threshold(1)
        code = CYCLES + "def f():\\n    def g():\\n        return 1\\n    return g()\\nreturn f() + await tools.build()"
        results = [await sandbox.run(code, backend="inprocess", bindings={"build": build}) for _ in range(5)]
        return {"values": [r.value for r in results], "errors": [str(r.error) for r in results if r.error]}
    """)
    assert report["values"] == [2001] * 5 and report["errors"] == [], report


@pytest.mark.parametrize("enabled", [True, False], ids=["collector-on", "collector-off"])
def test_the_collector_is_put_back_whatever_ends_the_run(enabled):
    """A syntax error, an exception, a timeout, a cancelled run and a run past its memory limit
    each leave the heap unfrozen, the thresholds as they were, the automatic collections on or
    off as the host had them, and no run's object behind."""
    report = in_fresh_interpreter("""
    async def main():
        if not ENABLED:
            gc.disable()
        gc.set_threshold(500, 7, 9)
        kinds = []
        for code in ["return (", CYCLES + "raise ValueError('x')", CYCLES + "while True:\\n    pass",
                     CYCLES + "x = [0] * (10**10)"]:
            # Only the loop meets its time limit, on however slow a machine.
            lim = sandbox.Limits(wall_time=0.5 if "while" in code else 60)
            result = await sandbox.run(code, backend="inprocess", limits=lim)
            kinds.append(result.error.kind)
        controller = sandbox.RunController()
        async def cancel():
            controller.cancel("enough")
            return 1
        result = await sandbox.run(CYCLES + "await tools.cancel()\\nreturn 1", backend="inprocess",
                                   bindings={"cancel": cancel}, controller=controller)
        kinds.append(result.error.kind)
        return {"kinds": kinds, "left": snippet_objects(), "after": collector()}
    """.replace("ENABLED", str(enabled)))
    assert report["kinds"] == ["syntax", "exception", "timeout", "memory", "cancelled"], report
    assert report["left"] == 0, report
    assert report["after"] == [0, [500, 7, 9], enabled, 0], report


#: Collections by where they start while a run is live: in one of its steps, at its end
#: (`Releasing`), or in host code.
WHERE_COLLECTIONS_START = """
from sandbox.control import RELEASING
from sandbox.crossing import STEPPING
where = {"step": 0, "end": 0, "host": 0}
def count(phase, info):
    if phase == "start" and WINDOW.runs:
        where["step" if STEPPING.run is not None else "end" if RELEASING.active else "host"] += 1
gc.callbacks.append(count)
async def churn():
    junk = []
    for i in range(50000):
        made = []
        made.append(made)
        junk.append(made)
        if len(junk) > 100:
            junk.clear()
    return 1
CHURN = '''
for i in range(100000):
    made = []
    made.append(made)
await tools.churn()
for i in range(100000):
    made = []
    made.append(made)
return 1
'''
"""


def test_while_a_run_is_live_collections_start_only_in_its_steps():
    """The window pauses CPython's automatic collections (`gc.disable`) and starts them in the
    run's steps instead (`GarbageWindow.collect_due`): a binding that makes 50,000 cycles starts
    none, where before any allocation past the threshold could start one there and finalize
    the run's garbage in host code. The run's own cycles are still collected as it makes them,
    and the host's automatic collections are back on after it."""
    report = in_fresh_interpreter(WHERE_COLLECTIONS_START + textwrap.dedent("""
    async def main():
        result = await sandbox.run(CHURN, backend="inprocess", bindings={"churn": churn})
        return {"value": result.value, "where": where, "after": collector()}
    """))
    assert report["value"] == 1, report
    assert report["where"]["host"] == 0 and report["where"]["step"] > 20, report
    assert report["after"] == [0, [700, 10, 10], True, 0], report


def test_a_host_that_turns_the_collector_on_during_a_run_collects_in_host_code_again():
    """The pause is the host's to undo: a binding that calls `gc.enable()` has collections
    start where it allocates, as without a window (the gates of `execution` stand there), and
    the collector stays on after the run."""
    report = in_fresh_interpreter(WHERE_COLLECTIONS_START + textwrap.dedent("""
    async def main():
        async def enable():
            gc.enable()
            return await churn()
        result = await sandbox.run(CHURN.replace("churn", "enable"), backend="inprocess",
                                   bindings={"enable": enable})
        return {"value": result.value, "where": where, "after": collector()}
    """))
    assert report["value"] == 1, report
    assert report["where"]["host"] > 0, report
    assert report["after"] == [0, [700, 10, 10], True, 0], report


def test_overlapping_runs_share_one_window_and_the_last_closes_it():
    report = in_fresh_interpreter("""
    states = []
    async def nap():
        states.append([gc.get_freeze_count() > 0, WINDOW.runs])
        await anyio.sleep(0.05)
        return 1
    async def main():
        gc.disable()
        async def one():
            await sandbox.run(CYCLES + "await tools.nap()\\nreturn 1", backend="inprocess",
                              bindings={"nap": nap})
        async with anyio.create_task_group() as tg:
            tg.start_soon(one)
            tg.start_soon(one)
        return {"states": states, "left": snippet_objects(), "after": collector()}
    """)
    assert len(report["states"]) == 2 and [True, 2] in report["states"], report  # they overlapped
    assert report["left"] == 0, report
    assert report["after"][:1] + report["after"][3:] == [0, 0], report


def test_a_host_that_froze_objects_itself_keeps_them_frozen():
    """Unfreezing would release the host's own frozen objects: no window opens then, and runs
    work as before (what they leave, the host's collector finds)."""
    report = in_fresh_interpreter("""
    async def main():
        keep = [[i] for i in range(1000)]
        gc.freeze()
        frozen = gc.get_freeze_count()
        result = await sandbox.run(CYCLES + "return len(nodes)", backend="inprocess")
        frozen_after = gc.get_freeze_count()
        return {"value": result.value, "frozen": [frozen, frozen_after], "kept": keep[-1],
                "after": collector()[3:], "collected": gc.collect() > 0}
    """)
    assert report["value"] == 50, report
    frozen, frozen_after = report["frozen"]
    assert frozen > 1000 and frozen_after > 1000, report  # not unfrozen (objects freed leave it)
    assert report["kept"] == [999] and report["after"] == [0], report
    assert report["collected"], report


@pytest.mark.parametrize("collect", ["gc.collect()", "gc.collect(1)"])
def test_an_older_collection_in_the_window_is_followed_by_the_close(collect):
    """A host's explicit older collection during the run moves what survives it to an older
    generation; the close examines every generation not frozen, which hold only what the window
    made."""
    report = in_fresh_interpreter(f"""
    async def older():
        {collect}
        return 1
    async def main():
        gc.disable()
        result = await sandbox.run(CYCLES + "await tools.older()\\ndel nodes\\nreturn 1",
                                   backend="inprocess", bindings={{"older": older}})
        return {{"value": result.value, "left": snippet_objects(), "after": collector()}}
    """)
    assert report["value"] == 1, report
    assert report["left"] == 0, report
    assert report["after"] == [0, [700, 10, 10], False, 0], report


def test_what_a_sessions_runs_kept_is_finalized_when_the_session_closes():
    """A session's runs keep their objects in its globals across runs: what one run drops of an
    earlier one's waits for a full collection, and the session's end runs one."""
    report = in_fresh_interpreter("""
    async def main():
        gc.disable()
        counts = []
        async with sandbox.open_session("inprocess") as session:
            first = await session.run(CYCLES + "return len(nodes)")
            counts.append(snippet_objects())
            second = await session.run("del nodes\\nreturn 1")
            counts.append(snippet_objects())
        counts.append(snippet_objects())
        return {"values": [first.value, second.value], "counts": counts, "after": collector()}
    """)
    assert report["values"] == [50, 1], report
    first, second, closed = report["counts"]
    assert first >= 51 and second >= 51 and closed == 0, report
    assert report["after"] == [0, [700, 10, 10], False, 0], report


def test_what_a_sessions_close_brings_back_to_life_is_finalized_before_it_returns():
    """A review's session kept such a cycle in its globals: the session's end ran one collection,
    whose late code made a new generator the host's own later collection finalized (a codec name
    left in `encodings`' cache, a writable `__annotations__` dict in `re.Pattern`). The session's
    end collects as a run's close does, again while a pass finds garbage, with the clean-up after
    each."""
    report = in_fresh_interpreter(f"""
    import encodings, re
    async def main():
        async with sandbox.open_session("inprocess") as session:
            first = await session.run({RESURRECTING!r})
            second = await session.run("return 2")
        closed = snippet_objects()
        gc.collect()
        return {{"values": [first.value, second.value], "closed": closed,
                 "codecs": sorted(k for k in encodings._cache if "late_after" in k),
                 "annotations": "__annotations__" in re.Pattern.__dict__}}
    """)
    assert report == {"values": ["kept", 2], "closed": 0, "codecs": [], "annotations": False}, report


#: Three stages of late code, each freed by the one before: A's lets go of B, B's of X, and X's
#: puts X back into a session global (all of what that collection finalized comes back to life,
#: so `gc.collect()` counts none of it) while it looks up a codec name and reads
#: `re.Pattern.__annotations__`.
RESURRECTED_UNCOUNTED = '''
import functools, heapq, itertools, collections, re
class M(map):
    pass
def late_cycle(cycle, chain_items):
    m = M(int, itertools.repeat(1))
    m.close = functools.partial(collections.deque, itertools.chain(*chain_items), 0)
    g = heapq.merge(m)
    next(g)
    next(g)
    cycle.extend([g, m, cycle])
    return cycle
L1 = []
L2 = []
XG = []
late_cycle(XG, [map(L2.append, [XG]), map(classmethod, [re.Pattern]), map(bytes.decode, [b"a"], ["uncounted_late"])])
BG = late_cycle([], [itertools.starmap(L2.clear, [()])])
L2.append(XG)
L1.append(BG)
AG = late_cycle([], [itertools.starmap(L1.clear, [()])])
del XG, BG, AG
return "ok"
'''


def test_late_code_of_a_collection_that_counts_nothing_is_cleaned_up_after():
    """`gc.collect()` counts only what stays unreachable: a review's third collection at a
    session run's close finalized X, whose late code brought X back to life, so it counted 0 and
    the close ended without the clean-up after it; `re.Pattern` kept a writable
    `__annotations__` dict and `encodings` the codec name until some later run. The clean-up
    now comes after the last collection, whatever it counted."""
    report = in_fresh_interpreter(f"""
    import encodings, re
    async def main():
        async with sandbox.open_session("inprocess") as session:
            result = await session.run({RESURRECTED_UNCOUNTED!r})
            state = {{"value": result.value, "codecs": sorted(k for k in encodings._cache if "uncounted" in k),
                      "annotations": "__annotations__" in re.Pattern.__dict__}}
        return state
    """)
    assert report == {"value": "ok", "codecs": [], "annotations": False}, report


def test_a_host_finalizer_that_closes_a_session_in_the_close_returns():
    """The close finalizes the host's own cyclic garbage made during the run (here in a
    binding); a host object whose finalizer closes an in-process session there re-entered the
    window on the thread that held its lock, and the host hung (a review's)."""
    report = in_fresh_interpreter("""
    import warnings
    async def main():
        other = sandbox.open_session("inprocess")
        first = await other.run("return 2")
        class Conversation:
            def __init__(self):
                self.me = self
            def __del__(self):
                other.close()
        async def make():
            Conversation()
            return 1
        filters = list(warnings.filters)
        result = await sandbox.run("return await tools.make()", backend="inprocess", bindings={"make": make})
        return {"values": [first.value, result.value], "closed": other.closed,
                "filters_kept": warnings.filters[len(warnings.filters) - len(filters):] == filters,
                "after": collector()}
    """)
    assert report["values"] == [2, 1] and report["closed"] and report["filters_kept"], report
    assert report["after"] == [0, [700, 10, 10], True, 0], report


def test_the_close_puts_the_collector_back_when_the_clean_up_raises():
    report = in_fresh_interpreter("""
    async def main():
        calls = []
        def cleanup():
            calls.append(gc.get_freeze_count() > 0)
            raise KeyError("from the clean-up")
        WINDOW.enter()
        frozen = gc.get_freeze_count() > 0
        try:
            WINDOW.leave(cleanup)
        except KeyError:
            calls.append("raised")
        return {"frozen": frozen, "calls": calls, "after": collector()}
    """)
    assert report["frozen"] and report["calls"] == [True, "raised"], report
    assert report["after"] == [0, [700, 10, 10], True, 0], report


#: A review's: the first generator's late `close` (run by the close's collection) brings its
#: garbage back to life (an iterator over `G`, put into `G`) and starts a new generator over `m2`,
#: kept there; at 59fec26 both outlived the close, and the host's own later collection ran
#: `m2.close`.
RESURRECTS = """
import collections, functools, heapq, itertools, decimal
class M(map):
    pass
G = []
H = []
m2 = M(int, itertools.repeat(1))
m2.close = functools.partial(decimal.Decimal(2).sqrt)
late = itertools.chain(map(G.extend, [map(iter, [G])]), map(H.append, map(heapq.merge, [m2])),
                       map(next, map(H.__getitem__, [0, 0])))
m = M(int, itertools.repeat(1))
m.close = functools.partial(collections.deque, late, 0)
g = heapq.merge(m)
next(g)
next(g)
G.append(g)
G.append(H)
G.append(G)
del g, m, m2, G, H, late
return 1
"""


#: The same, kept in a session's global, with a payload that looks up a codec name and reads
#: `re.Pattern.__annotations__` (the host's collector would run it after the session).
RESURRECTING = RESURRECTS.replace("itertools, decimal", "itertools, decimal, re").replace(
    "functools.partial(decimal.Decimal(2).sqrt)",
    'functools.partial(collections.deque, itertools.chain(map(classmethod, [re.Pattern]), '
    'map(bytes.decode, [b"a"], ["late_after_session"])), 0)',
).replace("del g, m, m2, G, H, late\nreturn 1", "keep = G\ndel g, m, m2, G, H, late\nreturn 'kept'")
assert "late_after_session" in RESURRECTING and "keep = G" in RESURRECTING


def test_what_the_close_brings_back_to_life_is_collected_again():
    report = in_fresh_interpreter("""
    async def main():
        gc.disable()
        result = await sandbox.run(RESURRECTS, backend="inprocess")
        return {"value": result.value, "left": snippet_objects(), "after": collector()}
    """.replace("RESURRECTS", repr(RESURRECTS)))
    assert report["value"] == 1, report
    assert report["left"] == 0, report
    assert report["after"] == [0, [700, 10, 10], False, 0], report


def test_what_still_makes_garbage_after_the_last_pass_is_never_let_go():
    """With one pass, the resurrected cycle and its new generator are still there after the
    close: they are quarantined, the host's own collection later finalizes none of them, and
    the run ends `crashed`. Past the quarantine's limit, in-process runs refuse."""
    report = in_fresh_interpreter("""
    import sandbox.garbage
    sandbox.garbage.MAX_PASSES = 1
    sandbox.garbage.QUARANTINE_LIMIT = 0
    async def main():
        gc.disable()
        result = await sandbox.run(RESURRECTS, backend="inprocess")
        left = snippet_objects()
        gc.collect()
        refused = await sandbox.run("return 1", backend="inprocess")
        return {"error": [result.error.kind, result.error.message], "left": [left, snippet_objects()],
                "refused": [refused.error.kind, refused.error.message],
                "quarantined": len(sandbox.garbage.QUARANTINE), "after": collector()}
    """.replace("RESURRECTS", repr(RESURRECTS)))
    from sandbox.inprocess import QUARANTINE_FULL, QUARANTINED

    assert report["error"] == ["crashed", QUARANTINED], report
    assert report["refused"] == ["crashed", QUARANTINE_FULL], report
    left, after_host_collection = report["left"]
    assert left > 0 and after_host_collection == left and report["quarantined"] == 1, report
    assert report["after"] == [0, [700, 10, 10], False, 0], report


def test_the_quarantine_keeps_nothing_the_host_holds():
    """A review's quarantine took every object not frozen, the host's own made while the window
    was open among them, for good. It takes garbage only: what nothing outside refers to."""
    report = in_fresh_interpreter("""
    import weakref
    import sandbox.garbage
    sandbox.garbage.MAX_PASSES = 1
    freed, box = [], []
    class HostThing:
        pass
    async def make():
        thing = HostThing()
        thing.me = thing
        weakref.finalize(thing, freed.append, "freed")
        box.append(thing)
        return 1
    async def main():
        gc.disable()
        code = RESURRECTS.replace("return 1", "return await tools.make()")
        result = await sandbox.run(code, backend="inprocess", bindings={"make": make})
        quarantined = sum(map(len, sandbox.garbage.QUARANTINE))
        box.clear()
        gc.collect()
        return {"kind": result.error.kind, "quarantined": quarantined, "freed": freed}
    """.replace("RESURRECTS", repr(RESURRECTS)))
    assert report["kind"] == "crashed", report
    assert report["quarantined"] > 0 and report["freed"] == ["freed"], report


def test_the_quarantines_size_counts_the_buffers_its_objects_hold():
    """A review's quarantined lists held 50 MB `bytearray`s, which the collector does not track:
    the limit counts them."""
    from sandbox.garbage import _size

    buffer = bytearray(10**6)
    assert _size([[buffer], [buffer]]) > 10**6
    assert _size([[buffer], [buffer]]) < 2 * 10**6  # each counted once


def test_the_quarantines_size_runs_no_hook_of_a_runs_class():
    """`sys.getsizeof` calls `__sizeof__` by name, in the close, outside every step. A review's
    run class defined it in Python, which raised out of the close into the host (and the
    quarantine's memory went uncounted, past its limit); as a `functools.partial` returning
    10**18, which made every later in-process run refuse. The close reads the size from the
    nearest class that defines it in C: the run ends `crashed`, its bytes are counted as they
    are, and later runs go on."""
    hooks = """
class Python:
    def __sizeof__(self):
        return 1
class Partial:
    __sizeof__ = functools.partial(int, "999999999999999999")
class Untracked(int):
    __slots__ = ()
    __sizeof__ = functools.partial(int, "999999999999999999")
"""
    code = RESURRECTS.replace("class M(map):", hooks + "class M(map):").replace(
        "G.append(G)\n", "G.append(G)\nG.append(Python())\nG.append(Partial())\nG.append(Untracked(5))\n"
        "G.append(bytearray(10**6))\n")
    report = in_fresh_interpreter("""
    import sandbox.garbage
    sandbox.garbage.MAX_PASSES = 1
    async def main():
        gc.disable()
        result = await sandbox.run(CODE, backend="inprocess")
        later = await sandbox.run("return 1", backend="inprocess")
        return {"error": [result.error.kind, result.error.message], "later": later.value,
                "kept": sandbox.garbage.WINDOW.quarantined_bytes, "after": collector()}
    """.replace("CODE", repr(code)))
    from sandbox.inprocess import QUARANTINED

    assert report["error"] == ["crashed", QUARANTINED], report
    assert report["later"] == 1, report
    assert 10**6 < report["kept"] < 2 * 10**6, report
    assert report["after"] == [0, [700, 10, 10], False, 0], report


def test_nothing_keeps_a_runs_execution_past_its_end():
    """What only a run held goes at its end, inside `execution.Releasing`, for a session's runs
    too: a session kept each run's `Execution` (its builtins held the run's `tools` namespace)
    until the next run refilled them, in host code, where a review's decimal context, which
    only that `Execution` held, ran a late generator that flagged the host's context. Each
    run's `Execution`, whatever ended it, is gone when `run` returns."""
    report = in_fresh_interpreter("""
    import weakref
    import sandbox.inprocess
    made = []
    class Recorded(sandbox.inprocess.Execution):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(weakref.ref(self))
    sandbox.inprocess.Execution = Recorded
    async def rows():
        return [1, 2]
    RUNS = [CYCLES + "return await tools.rows()", CYCLES + "raise ValueError('x')",
            CYCLES + "while True:\\n    pass", "return 1"]
    async def main():
        alive = []
        lim = sandbox.Limits(wall_time=0.5)
        for code in RUNS:
            await sandbox.run(code, backend="inprocess", bindings={"rows": rows}, limits=lim)
            alive.append(sum(ref() is not None for ref in made))
        async with sandbox.open_session(backend="inprocess") as session:
            for code in RUNS:
                await session.run(code, bindings={"rows": rows}, limits=lim)
                alive.append(sum(ref() is not None for ref in made))
        return {"made": len(made), "alive": alive}
    """)
    assert report["made"] == 8 and report["alive"] == [0] * 8, report



#: Snippets whose objects reach the clean-up's walks and the shims' caches: an enum (a new
#: `RegexFlag` combination makes the clean-up walk the enum classes again), a dataclass, copies,
#: functools' caches, a runtime protocol check, a named tuple, a template subclass.
REACHES_THE_CLEAN_UP = [
    "import enum, re\nclass E(enum.Enum):\n    A = 1\nv = re.I | re.M | re.S | re.A | re.X\nreturn 1",
    "import enum\nclass F(enum.Flag):\n    A = 1\n    B = 2\nx = F.A | F.B\nreturn 1",
    "import dataclasses\n@dataclasses.dataclass\nclass P:\n    x: int = 1\nreturn dataclasses.asdict(P())['x']",
    "import copy\nclass C:\n    pass\nc = C()\nc.me = c\nd = copy.deepcopy(c)\ne = copy.copy(c)\nreturn 1",
    "import functools\nclass K:\n    pass\n@functools.lru_cache\ndef f(k):\n    return k\nf(K())\n"
    "@functools.cache\ndef g(k):\n    return k\ng(K())\nreturn 1",
    "from typing import Protocol, runtime_checkable\n@runtime_checkable\nclass P(Protocol):\n"
    "    def m(self): ...\nclass A:\n    def m(self):\n        return 1\nreturn isinstance(A(), P)",
    "import collections\nT = collections.namedtuple('T', 'a b')\nreturn T(1, 2).a",
    "import string\nclass S(string.Template):\n    delimiter = '%'\nreturn S('%x').substitute(x=1)",
]


def test_nothing_of_a_run_outlives_it_whatever_it_reaches():
    """A review's enum class stayed alive for good after its run, with everything hanging off
    it: the clean-up's record of the enum classes' value maps (`enum_maps.ENUM_VALUE_MAPS`) kept
    the run's own class's map, whose members hold the class. With the collector off, after each
    of these runs, single or in a session, no object of the snippet's is left."""
    report = in_fresh_interpreter("""
    async def main():
        gc.disable()
        left = []
        for code in SNIPPETS:
            result = await sandbox.run(code, backend="inprocess")
            left.append([result.error and str(result.error), snippet_objects()])
        async with sandbox.open_session(backend="inprocess") as session:
            for code in SNIPPETS:
                await session.run(code)
        left.append(["session", snippet_objects()])
        return {"left": left}
    """.replace("SNIPPETS", repr(REACHES_THE_CLEAN_UP)))
    assert report["left"] == [[None, 0]] * len(REACHES_THE_CLEAN_UP) + [["session", 0]], report
