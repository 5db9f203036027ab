"""Where an in-process run's garbage is finalized: in one of its steps, or at its end.

CPython finalizes a reference cycle when a collection finds it, and a collection starts wherever
any code on any thread allocates. For an in-process run's objects that was anywhere: inside host
code holding a lock, inside a later run's step, on a host thread, minutes after the run. What
CPython calls by name on a freed object (the `close` of a generator's delegate, `derive` under
`except*`) can be C code the snippet chose, which no tick sees; every place it could run needed
a gate of its own, and four reviews each found a place without one.

`GarbageWindow` narrows where. While in-process runs are live:
- everything that existed before the first of them is frozen (`gc.freeze`), so a collection sees
  only objects made since;
- a collection that starts outside every run's step (host code between steps, a binding, a host
  thread) frees nothing: it holds the young generations it was about to examine until the window
  closes, and their finalizers do not run in host code;
- middle-generation collections are put off (its threshold raised), so nothing made in the window
  reaches the oldest generation, where the closing collection would not look;
- when the last live run ends, inside `execution.Releasing`, one collection of the young
  generations finalizes what the runs left, then the caller's clean-up (the caches, the shared
  state's put-back) undoes what that code wrote, and a second collection takes what the clean-up
  let go of. Then the heap is unfrozen and the threshold put back.

So a run's garbage is finalized in one of its own steps or at its own end, never in the host
afterwards; a session's, at the end of the run that made it or, for what its runs kept, by one
full collection when the session ends (`collect_all`). What it does not cover, each with the
gates of `execution` and `output` that still apply: garbage freed in another concurrent
in-process run's step (runs that overlap share one window), what a session's run drops of an
earlier run's (frozen while the later run is live, then the host's collector's), and a host that
froze objects itself (`gc.get_freeze_count()` above zero: unfreezing would release
them, so no window opens). `HOLD_LIMIT` bounds what the window keeps: past it, collections free
again (what they finalize is left to the gates) and what was held stays held until the close.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable

from .crossing import STEPPING

#: Objects held by collections outside every step before the window stops holding (memory).
HOLD_LIMIT = 1_000_000
#: The middle generation's threshold while a window is open: never reached in practice.
_PUT_OFF = 1 << 30


class GarbageWindow:
    """The process's one window (`WINDOW`): opened by the first live in-process run, closed by
    the last (`inprocess.InProcessRuntime.run`)."""

    __slots__ = ("_lock", "runs", "frozen", "holding", "held", "held_count", "_threshold",
                 "_older_collections")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.runs = 0
        #: The window froze the heap (False while closed, or when the host had frozen objects).
        self.frozen = False
        #: Whether a collection outside every step holds what it examines.
        self.holding = False
        self.held: list[list[object]] = []
        self.held_count = 0
        self._threshold: tuple[int, ...] = ()
        self._older_collections = 0

    def enter(self) -> None:
        """A run starts: the first live one opens the window."""
        with self._lock:
            self.runs += 1
            if self.runs > 1 or gc.get_freeze_count():
                return
            gc.freeze()
            self._threshold = gc.get_threshold()
            gc.set_threshold(self._threshold[0], _PUT_OFF, *self._threshold[2:])
            self._older_collections = _older_collections()
            self.frozen = self.holding = True

    def leave(self, cleanup: Callable[[], None]) -> None:
        """A run ends (in `execution.Releasing`, after the host dropped the run's own objects):
        `cleanup()` always runs; the last live run first finalizes the window's garbage here."""
        with self._lock:  # held to the end: a run another thread starts meanwhile waits for it
            self.runs -= 1
            if self.runs or not self.frozen:
                cleanup()
                return
            self.holding = False
            try:
                self._finalize(cleanup)
            finally:
                gc.set_threshold(*self._threshold)
                gc.unfreeze()
                self.frozen = False

    def _finalize(self, cleanup: Callable[[], None]) -> None:
        """The close: the window's garbage, then `cleanup()`, then what that let go of, each
        whatever the one before raised."""
        self.held.clear()
        self.held_count = 0
        # Nothing made in the window reached the oldest generation unless something forced an
        # older collection (a host's `gc.collect()`): then the oldest is examined too, and it
        # holds only what the window made, the rest being frozen.
        generation = 1 if _older_collections() == self._older_collections else 2
        try:
            gc.collect(generation)
        finally:
            try:
                cleanup()
            finally:
                gc.collect(generation)  # what the clean-up let go of (caches' keys, put-back values)

    def collect_all(self, cleanup: Callable[[], None]) -> None:
        """The end of an in-process session (in `execution.Releasing`): what its runs kept is
        old by now, so one full collection finalizes it here, then `cleanup()` runs. While a
        window is open its objects are frozen, and the host's collector finds them later."""
        try:
            if not self.frozen:
                gc.collect()
        finally:
            cleanup()

    def hold(self, generation: int) -> None:
        """From the collector hook, as a collection of `generation` starts: outside every run's
        step, keep what it examines (the young generations, all made in the window) alive."""
        if not self.holding or STEPPING.run is not None:
            return
        for young in range(generation + 1):
            objects = gc.get_objects(young)
            self.held.append(objects)
            self.held_count += len(objects)
        if self.held_count > HOLD_LIMIT:
            # Memory over promptness: later collections free again, where they start, and what
            # they finalize is left to the gates; what is held stays held until the window closes.
            self.holding = False


def _older_collections() -> int:
    """Collections of the middle and oldest generations so far (they move survivors older)."""
    stats = gc.get_stats()
    return int(stats[1]["collections"]) + int(stats[2]["collections"])


WINDOW = GarbageWindow()
