"""Prometheus metrics, on a registry of the service's own (no import-time globals)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

_BATCH_SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.jobs = Gauge(
            "dragoman_jobs", "Jobs in the store by status", ["status"], registry=self.registry
        )
        self.queue_depth = Gauge(
            "dragoman_queue_depth", "Jobs waiting for capacity", ["pool"], registry=self.registry
        )
        self.in_flight = Gauge(
            "dragoman_in_flight",
            "Jobs dispatched and not finished",
            ["pool"],
            registry=self.registry,
        )
        self.workers_desired = Gauge(
            "dragoman_workers_desired",
            "Workers the autoscaler wants",
            ["pool"],
            registry=self.registry,
        )
        self.workers_current = Gauge(
            "dragoman_workers_current",
            "Workers running or starting",
            ["pool"],
            registry=self.registry,
        )
        self.workers_busy = Gauge(
            "dragoman_workers_busy", "Workers with a job", ["pool"], registry=self.registry
        )
        self.segments_translated = Counter(
            "dragoman_segments_translated",
            "Segments translated by workers",
            ["engine", "pool"],
            registry=self.registry,
        )
        self.sync_segments = Counter(
            "dragoman_sync_segments_translated",
            "Segments translated by POST /v1/translate",
            ["engine"],
            registry=self.registry,
        )
        self.sync_segments_cached = Counter(
            "dragoman_sync_segments_cached",
            "Segments of synchronous requests answered from the segment cache",
            ["engine"],
            registry=self.registry,
        )
        self.batch_size = Histogram(
            "dragoman_engine_batch_size",
            "Segments per engine call",
            ["engine"],
            buckets=_BATCH_SIZES,
            registry=self.registry,
        )
        self.batch_latency = Histogram(
            "dragoman_engine_batch_seconds",
            "Wall time of one engine call",
            ["engine"],
            registry=self.registry,
        )

        self.routed = Counter(
            "dragoman_routed",
            "Messages dispatched: to an idle worker with the model warm, or to the pool's queue",
            ["pool", "outcome"],
            registry=self.registry,
        )
        self.routing_hit_ratio = Gauge(
            "dragoman_routing_hit_ratio",
            "Share of dispatched messages that went to a worker with the model warm",
            ["pool"],
            registry=self.registry,
        )
        self.jobs_per_message = Histogram(
            "dragoman_jobs_per_message",
            "Jobs sent in one work message (small jobs share an engine batch)",
            ["pool"],
            buckets=(1, 2, 4, 8, 16, 32, 64),
            registry=self.registry,
        )
        self.jobs_at_risk = Gauge(
            "dragoman_jobs_at_risk",
            "Jobs and shards waiting or running that will miss their deadline, as predicted",
            ["pool"],
            registry=self.registry,
        )
        self.gpu_fallbacks = Counter(
            "dragoman_gpu_fallbacks",
            "GPU jobs moved to the CPU pool because no GPU worker was there",
            registry=self.registry,
        )

    def observe_batch(self, engine: str, size: int, seconds: float) -> None:
        self.batch_size.labels(engine).observe(size)
        self.batch_latency.labels(engine).observe(seconds)
