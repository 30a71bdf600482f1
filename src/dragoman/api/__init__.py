"""The HTTP API (v1): a contract, see docs/api.md."""
