"""Signed notifications of jobs' ends (Standard Webhooks), kept in the store until
delivered."""
