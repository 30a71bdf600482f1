"""Signed notifications of jobs' ends (Standard Webhooks), kept in the store until
delivered: ``targets`` (which URLs may be called), ``notifier`` (jobs' ends into deliveries,
sent with retries), ``store`` (``WebhookDelivery`` rows and ``Deliveries`` on the shared
database)."""

from __future__ import annotations

from dragoman.webhooks.store import Deliveries, DeliveryStatus, SqlDeliveries, WebhookDelivery

__all__ = ["Deliveries", "DeliveryStatus", "SqlDeliveries", "WebhookDelivery"]
