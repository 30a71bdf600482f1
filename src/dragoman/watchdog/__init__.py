"""The Watchdog: dispatches within capacity, follows heartbeats, retries or fails the silent."""

from dragoman.watchdog.watchdog import Watchdog

__all__ = ["Watchdog"]
