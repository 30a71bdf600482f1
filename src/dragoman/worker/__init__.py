"""BatchWorker: takes jobs from its pool's queue and translates them with a warm engine."""

from dragoman.worker.worker import BatchWorker

__all__ = ["BatchWorker"]
