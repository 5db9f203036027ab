"""Where an in-process run's garbage is finalized: while it runs, or at its end, never after.

CPython finalizes a reference cycle when a collection finds it, and a collection starts wherever
any code on any thread allocates. For an in-process run's objects that was anywhere: inside host
code holding a lock, inside a later run's step, on a host thread, minutes after the run. What
CPython calls by name on a freed object (the `close` of a generator's delegate, `derive` under
`except*`) can be C code the snippet chose, which no tick sees; every place it could run needed
a gate of its own, and four reviews each found a place without one.

`GarbageWindow` narrows where. While in-process runs are live:
- everything that existed before the first of them is frozen (`gc.freeze`), so a collection sees
  only objects made since (the oldest generation included: it holds only what the window made);
- CPython's automatic collections are paused (`gc.disable`, when the host had them on), and the
  runs' steps start the collections CPython would have started by then (`collect_due`: at the
  budget's checks, every `TICK_CHECK_EVERY` ticks, and at each step's end), so what a collection
  finalizes runs as the run's code, with the run's state installed and its gates up. A
  collection no longer starts wherever host code allocates: in a binding, in the step's own
  boundary (a review aimed one at the `decimal.setcontext` there), in another coroutine, on a
  host thread;
- when the last live run ends, inside `execution.Releasing`, collections of every generation
  not frozen finalize what the runs left, again while the one before found garbage (what
  finalized code makes or brings back to life, a review's resurrected cycle holding a new
  generator, is examined by the next); then the caller's clean-up (the shared state's
  put-back, the caches) undoes what late code wrote and lets go of what shared holders kept of
  the runs, and while it put anything back, collections and the clean-up run again. The
  clean-up is always last. Up to `MAX_PASSES` collections; what is still there then is
  quarantined (`QUARANTINE`: what of it is garbage is kept alive, never finalized; the run ends
  `crashed`, and past `QUARANTINE_LIMIT` in-process runs refuse). Then the heap is unfrozen and
  the automatic collections are back on.

So a run's garbage is finalized in one of its steps or at its end, never after it; a session's,
at the end of the run that made it or, for what its runs kept, by full collections when the
session ends (`collect_all`, with the close's passes and quarantine). What it does not cover,
each with the gates of `execution` and `output` that still apply: a collection host code
starts itself (`gc.collect()`, or after a `gc.enable()` of its own while a run is live), garbage
freed in another concurrent in-process run's step (runs that overlap share one window), what a
session's run drops of an earlier run's (frozen while the later run is live, then the host's
collector's), a host that froze objects itself (`gc.get_freeze_count()` above zero: unfreezing
would release them, so no window opens), and reference-count frees, which happen wherever the
last reference goes.

The pause is process-wide: while a run is live, the host's cyclic garbage (on any thread) is
collected only when a run's step collects, or at the close; a run that waits on a binding for a
minute is a minute without automatic collections. A first version held off only the
collections that started in host code, by keeping what they would free, taking references inside
the collector's callback, to objects C code may still be building with a reference count of one
(`tuple(generator)`'s result, which CPython then resizes): CPython raised `SystemError` in the
host. Pausing takes no reference.

The close's collections are of the oldest generation, which resets CPython's count of long-lived
objects to what the window made: the host's next full collection comes after about ten middle-
generation collections (some 70,000 net allocations) instead of after its long-lived objects
grew by a quarter. That is at most one full collection of the host's heap per in-process run.
"""

from __future__ import annotations

import gc
import struct
import sys
import threading
from collections.abc import Callable
from types import MethodDescriptorType

#: Collections at the close, at most (`GarbageWindow._finalize`).
MAX_PASSES = 8
#: What the window made and still held when a close reached `MAX_PASSES`: finalized code that
#: made new garbage with every collection (a generator whose `close` makes the next). Kept for
#: the life of the process, so that none of its finalizers runs in the host's collections; the
#: run that left it ends `crashed` (`inprocess.QUARANTINED`).
QUARANTINE: list[list[object]] = []
#: Bytes the quarantine may keep before in-process runs refuse (`inprocess.QUARANTINE_FULL`): a
#: review's runs left 190 MB each there.
QUARANTINE_LIMIT = 256 * 1024 * 1024


class GarbageWindow:
    """The process's one window (`WINDOW`): opened by the first live in-process run, closed by
    the last (`inprocess.InProcessRuntime.run`)."""

    __slots__ = ("_lock", "runs", "frozen", "paused", "quarantined_bytes")

    def __init__(self) -> None:
        # Reentrant: what the close finalizes can be the host's own object, whose finalizer
        # closes a session on this thread (`collect_all`, which the frozen heap keeps to its
        # clean-up there).
        self._lock = threading.RLock()
        self.runs = 0
        #: The window froze the heap (False while closed, or when the host had frozen objects).
        self.frozen = False
        #: The window turned CPython's automatic collections off (`gc.disable`); the runs' steps
        #: collect instead (`collect_due`). False when the host had turned them off itself.
        self.paused = False
        #: What `QUARANTINE` keeps, in bytes (`_size`).
        self.quarantined_bytes = 0

    def enter(self) -> None:
        """A run starts: the first live one opens the window."""
        with self._lock:
            self.runs += 1
            if self.runs == 1 and not gc.get_freeze_count():
                gc.freeze()
                self.frozen = True
                if gc.isenabled():
                    gc.disable()
                    self.paused = True

    def collect_due(self) -> None:
        """Inside a run's step (the budget's checks, the step's end): the collection CPython
        would have started by now, had the window not paused it, runs here, where what it
        finalizes runs as the run's code, with the run's state installed. Which generation, as
        CPython picks it: the oldest whose count is past its threshold."""
        if not self.paused:
            return
        counts, thresholds = gc.get_count(), gc.get_threshold()
        if counts[0] <= thresholds[0] or not thresholds[0]:
            return
        gc.collect(2 if counts[2] > thresholds[2] else 1 if counts[1] > thresholds[1] else 0)

    def leave(self, cleanup: Callable[[], object]) -> int:
        """A run ends (in `execution.Releasing`, after the host dropped the run's own objects):
        `cleanup()` (which answers whether it put anything back) always runs; the last live run
        then finalizes the window's garbage here. How many objects the close quarantined (0:
        none, as for every run that is not hostile)."""
        with self._lock:  # held to the end: a run another thread starts meanwhile waits for it
            self.runs -= 1
            if self.runs or not self.frozen:
                cleanup()
                return 0
            try:
                quarantined = self._finalize(cleanup)
            finally:
                gc.unfreeze()
                self.frozen = False
                if self.paused:
                    self.paused = False
                    gc.enable()
            return quarantined

    def _finalize(self, cleanup: Callable[[], object]) -> int:
        """Collections until one finds no garbage, then `cleanup()`, again while the clean-up put
        anything back (what it lets go of, what shared holders kept of the runs, may be garbage
        for the next collection). The clean-up comes after the last collection: what a
        collection finalizes can run late code (a freed generator's delegate `close`), which
        writes what the clean-up puts back, and `gc.collect()` counts only what stays
        unreachable, so a collection whose late code brought all it finalized back to life (into
        a session's globals) counts none (reviews left codec names and a writable
        `re.Pattern.__annotations__` both ways). After `MAX_PASSES` collections, what finalized
        code keeps making is never let go (`QUARANTINE`), rather than left to the host's
        collector."""
        for _ in range(MAX_PASSES):
            if not gc.collect() and not cleanup():
                return 0
        cleanup()
        return self._quarantine()

    def _quarantine(self) -> int:
        kept = _young_garbage()
        QUARANTINE.append(kept)
        try:
            self.quarantined_bytes += _size(kept)
        except BaseException:
            self.quarantined_bytes = QUARANTINE_LIMIT + 1  # uncounted is full, never unbounded
            raise
        return len(kept)

    def quarantine_full(self) -> bool:
        """Whether what the quarantine keeps is past `QUARANTINE_LIMIT` (in-process runs refuse)."""
        return self.quarantined_bytes > QUARANTINE_LIMIT

    def collect_all(self, cleanup: Callable[[], object]) -> int:
        """The end of an in-process session (in `execution.Releasing`): what its runs kept is
        old by now, so full collections finalize it here, as a run's close does (`_finalize`:
        a review's late code in the one collection this was brought its cycle back to life with
        a new started generator, which the host's own collection finalized after the session),
        and `cleanup()` runs last. While a window is open its objects are frozen, and the host's
        collector finds them later. How many objects the close quarantined."""
        with self._lock:
            if self.frozen:
                cleanup()
                return 0
            return self._finalize(cleanup)


def _size(kept: list[object]) -> int:
    """Bytes `kept` holds: each object's own size and that of the objects it refers to that the
    collector does not track (a `bytearray`'s buffer, a `str`), each counted once."""
    seen: set[int] = set()
    size = 0
    for found in kept:
        for part in (found, *gc.get_referents(found)):
            if id(part) not in seen and (part is found or not gc.is_tracked(part)):
                seen.add(id(part))
                size += _own_size(part)
    return size


def _own_size(found: object) -> int:
    """`sys.getsizeof(found)` without its hook: the `__sizeof__` of the nearest class in the
    type's MRO that defines it in C (`object`'s at the latest). `sys.getsizeof` calls
    `__sizeof__` by name, and a review's run class defined it: in Python, which raised out of the
    close into the host; as a `functools.partial` returning 10**18, which filled the quarantine
    for the life of the process."""
    for cls in type(found).__mro__:
        method = cls.__dict__.get("__sizeof__")
        if type(method) is MethodDescriptorType and method.__objclass__ is cls and method.__name__ == "__sizeof__":
            flags = type(found).__flags__
            return method(found) + (_GC_HEADER if flags & _HAVE_GC else 0) + (
                _DICT_HEADER if flags & _MANAGED_DICT else 0)
    raise AssertionError("object defines __sizeof__ in C")  # pragma: no cover


#: What `sys.getsizeof` adds in front of an object: the collector's header, and the two slots
#: of an instance dictionary CPython manages (3.11's pre-header).
_GC_HEADER = sys.getsizeof([]) - [].__sizeof__()
_DICT_HEADER = 2 * struct.calcsize("P")
_HAVE_GC = 1 << 14  # Py_TPFLAGS_HAVE_GC
_MANAGED_DICT = 1 << 4  # Py_TPFLAGS_MANAGED_DICT


def _young_garbage() -> list[object]:
    """What the generations not frozen hold that nothing outside them refers to, worked out as the
    collector does (references from within subtracted from reference counts), without finalizing
    any of it: never an object the host still holds (a review's quarantine of every young object
    kept the host's own, made while the window was open, for good)."""
    young = gc.get_objects(0)  # not itself; the lists added below are not in these generations
    young += gc.get_objects(1)
    young += gc.get_objects(2)
    at = {id(found): n for n, found in enumerate(young)}
    # Each count includes `young`'s reference, the loop's and the call's own.
    outside = [sys.getrefcount(found) - 3 for found in young]
    for found in young:
        for referent in gc.get_referents(found):
            n = at.get(id(referent))
            if n is not None:
                outside[n] -= 1
    pending = [n for n, count in enumerate(outside) if count > 0]
    reached = set(pending)
    while pending:
        for referent in gc.get_referents(young[pending.pop()]):
            n = at.get(id(referent))
            if n is not None and n not in reached:
                reached.add(n)
                pending.append(n)
    return [found for n, found in enumerate(young) if n not in reached]


WINDOW = GarbageWindow()
