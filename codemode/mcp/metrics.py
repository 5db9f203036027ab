"""The numbers ``GET /metrics`` serves, in the Prometheus text format (``prometheus_client``).

Each replica has its own ``CollectorRegistry`` (never the process-global one), so two servers
in one process, as in tests, do not mix their counts. Counters and the histogram are updated as
runs end; the gauges (sessions, workers, runs in flight, draining) are read when scraped.

    codemode_runs_total{kind}               run_code calls by how they ended: ok, or the error
                                            kind (timeout, exception, cancelled, refused, ...)
    codemode_run_duration_seconds           histogram of run_code durations
    codemode_sub_calls_total{status}        sub-calls by status: ok, error, cancelled, abandoned
    codemode_sessions                       code sessions alive
    codemode_session_workers                session workers alive (an idle-reset session has none)
    codemode_runs_in_flight                 runs being served now
    codemode_sessions_evicted_total         idle sessions closed to make room under the cap
    codemode_sessions_refused_total         new sessions refused (cap reached, all busy)
    codemode_draining                       1 while the replica drains
    codemode_drains_total                   drains started
    codemode_drain_cancelled_runs_total     runs cancelled when a drain timed out
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from .serving import ServeController

__all__ = ["CONTENT_TYPE", "RUN_BUCKETS", "ServeMetrics"]

CONTENT_TYPE = CONTENT_TYPE_LATEST
#: Seconds: from a trivial program (a few ms) to the longest ``--timeout``.
RUN_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)


class _Live(Collector):
    """The gauges, read from the controller at scrape time."""

    def __init__(self, controller: ServeController) -> None:
        self.controller = controller

    def collect(self) -> Iterator[Any]:
        c = self.controller
        for name, text, value in (
            ("codemode_sessions", "Code sessions alive.", len(c.live_sessions())),
            ("codemode_session_workers", "Session worker processes alive.", c.session_workers()),
            ("codemode_runs_in_flight", "run_code calls being served now.", c.runs_in_flight),
            ("codemode_draining", "1 while this replica drains.", int(c.draining)),
        ):
            yield GaugeMetricFamily(name, text, value=value)


class ServeMetrics:
    """The metrics of one replica; ``render()`` is the body of ``GET /metrics``."""

    def __init__(self, controller: ServeController) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.runs = Counter("codemode_runs", "run_code calls by how they ended.", ["kind"], registry=r)
        self.duration = Histogram("codemode_run_duration_seconds", "run_code call durations.",
                                  buckets=RUN_BUCKETS, registry=r)
        self.sub_calls = Counter("codemode_sub_calls", "Sub-calls made by programs, by status.", ["status"], registry=r)
        self.sessions_evicted = Counter("codemode_sessions_evicted", "Idle sessions closed to make room.", registry=r)
        self.sessions_refused = Counter("codemode_sessions_refused", "New sessions refused at the cap.", registry=r)
        self.drains = Counter("codemode_drains", "Drains started.", registry=r)
        self.drain_cancelled = Counter("codemode_drain_cancelled_runs", "Runs cancelled by a drain timeout.", registry=r)
        r.register(_Live(controller))

    def observe_run(self, kind: str, seconds: float, sub_calls: Any = ()) -> None:
        """Count one finished ``run_code`` call and its sub-calls."""
        self.runs.labels(kind=kind).inc()
        self.duration.observe(seconds)
        for call in sub_calls:
            self.sub_calls.labels(status=call.status).inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)
