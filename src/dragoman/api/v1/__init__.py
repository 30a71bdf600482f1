"""dragoman's own API, ``/v1``: the contract of ``docs/api.md``, described by
``/openapi.json``; one module per resource, ``schemas`` the bodies."""
