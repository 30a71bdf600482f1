"""Job ids."""

from __future__ import annotations

import uuid6


def new_job_id() -> str:
    """A new job's id: 32 hex digits of a UUIDv7, in creation order (ADR 0030). Jobs, their
    documents and segments are stored by job id; ids that grow add rows at the end of each
    index, where random ones touched a page of each anywhere and cost four times as much to
    commit. Its first digits are the time: a short form of it is its last digits."""
    return uuid6.uuid7().hex
