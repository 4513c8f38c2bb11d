"""The `Metrics` port over prometheus_client, in a registry of its own; what the store holds read at scrape time."""
from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from memory import MemoryStore
from scheduler.budget import TokenBudget

log = logging.getLogger(__name__)

REPLY_BUCKETS = (0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 20.0, 30.0, 60.0, 120.0)
OUTBOX_STATUSES = ("pending", "sent", "failed", "dropped")


@dataclass
class Readings:
    """What the store said at the last scrape (all zero until then, or while the database does not answer)."""

    database_up: bool = False
    background_tokens_today: int = 0
    background_tokens_cap: int = 0
    outbox: dict[str, int] = field(default_factory=dict)
    admission: dict[str, int] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=dict)


class StoreCollector(Collector):
    """Yields the last readings as metric families (prometheus_client collects synchronously)."""

    def __init__(self) -> None:
        self.readings = Readings()

    def collect(self) -> Iterator[Metric]:
        """The families of the last readings."""
        r = self.readings
        yield GaugeMetricFamily("mnemo_database_up", "Whether the database answered at this scrape.",
                                value=int(r.database_up))
        yield GaugeMetricFamily("mnemo_background_tokens_today",
                                "Background model tokens used today (local day), counted against the budget.",
                                value=r.background_tokens_today)
        yield GaugeMetricFamily("mnemo_background_tokens_cap", "The daily background token budget (0: no cap).",
                                value=r.background_tokens_cap)
        outbox = GaugeMetricFamily("mnemo_outbox_items", "Pushed messages in the outbox by status.",
                                   labels=["status"])
        for status in sorted({*OUTBOX_STATUSES, *r.outbox}):
            outbox.add_metric([status], r.outbox.get(status, 0))
        yield outbox
        notes = CounterMetricFamily("mnemo_extraction_notes",
                                    "Notes from extraction by admission outcome (admitted, dropped, contradictions).",
                                    labels=["outcome"])
        for outcome, count in sorted(r.admission.items()):
            notes.add_metric([outcome], count)
        yield notes
        failures = CounterMetricFamily("mnemo_failures", "Background failures kept in the database, by kind.",
                                       labels=["kind"])
        for kind, count in sorted(r.failures.items()):
            failures.add_metric([kind], count)
        yield failures

    async def read(self, store: MemoryStore, budget: TokenBudget | None, now: float) -> None:
        """Read the store's numbers; a database that does not answer leaves zeros and `mnemo_database_up 0`."""
        if not await store.db.reachable():
            self.readings = Readings()
            return
        status = await budget.status(now) if budget is not None else None
        self.readings = Readings(
            database_up=True,
            background_tokens_today=status.spent if status else 0,
            background_tokens_cap=status.cap if status else 0,
            outbox=await store.outbox.counts(),
            admission=await store.admission.totals(),
            failures={f.name: f.count for f in await store.failures.all()},
        )


class PrometheusMetrics:
    """Counts what happens in the process (the `Metrics` port); renders everything in Prometheus's text format."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self.registry = CollectorRegistry(auto_describe=True)  # its own, never the global one
        r = self.registry
        self.messages_in = Counter("mnemo_messages_in", "Messages and commands received, by channel.",
                                   ["channel"], registry=r)
        self.messages_out = Counter("mnemo_messages_out", "Replies given, by channel.", ["channel"], registry=r)
        self.reply = Histogram("mnemo_reply_seconds", "Seconds from a message to its reply being ready, by channel.",
                               ["channel"], buckets=REPLY_BUCKETS, registry=r)
        self.model_calls = Counter("mnemo_model_calls", "Model calls by purpose (chat, background) and outcome.",
                                   ["purpose", "outcome"], registry=r)
        self.tokens = Counter("mnemo_model_tokens", "Tokens the provider reported, by purpose and direction.",
                              ["purpose", "direction"], registry=r)
        self.cache_hits = Counter("mnemo_model_cache_hits", "Model calls that read part of the prompt from the cache.",
                                  ["purpose"], registry=r)
        self.cache_tokens = Counter("mnemo_model_cache_read_tokens", "Prompt tokens read from the provider's cache.",
                                    ["purpose"], registry=r)
        self.errors = Counter("mnemo_errors", "Errors in this process, by kind.", ["kind"], registry=r)
        self.jobs = Counter("mnemo_scheduler_job_runs", "Scheduler jobs run, by job and outcome (ok, failed, skipped).",
                            ["job", "outcome"], registry=r)
        self.store_readings = StoreCollector()
        r.register(self.store_readings)

    def message_in(self, channel: str) -> None:
        """Count a message received."""
        self.messages_in.labels(channel).inc()

    def message_out(self, channel: str) -> None:
        """Count a reply given."""
        self.messages_out.labels(channel).inc()

    def reply_seconds(self, channel: str, seconds: float) -> None:
        """Observe how long a reply took."""
        self.reply.labels(channel).observe(seconds)

    def model_call(self, purpose: str, *, input_tokens: int = 0, output_tokens: int = 0,
                   cache_read_tokens: int = 0, failed: bool = False) -> None:
        """Count a model call, its tokens and whether it hit the prompt cache."""
        self.model_calls.labels(purpose, "failed" if failed else "ok").inc()
        self.tokens.labels(purpose, "input").inc(input_tokens)
        self.tokens.labels(purpose, "output").inc(output_tokens)
        self.cache_tokens.labels(purpose).inc(cache_read_tokens)
        if cache_read_tokens > 0:
            self.cache_hits.labels(purpose).inc()
        else:
            self.cache_hits.labels(purpose)  # the series exists from the first call on, at 0

    def error(self, kind: str) -> None:
        """Count an error of this kind."""
        self.errors.labels(kind).inc()

    def job_ran(self, job: str, outcome: str) -> None:
        """Count a scheduler job's run."""
        self.jobs.labels(job, outcome).inc()

    async def render(self, store: MemoryStore, budget: TokenBudget | None) -> bytes:
        """Everything in Prometheus's text format, the store's numbers read now."""
        await self.store_readings.read(store, budget, self.clock())
        return generate_latest(self.registry)
