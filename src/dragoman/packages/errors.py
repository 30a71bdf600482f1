"""Why an install, a verification or a removal failed: one line a user can act on."""

from __future__ import annotations

from dragoman.errors import DragomanError


class PackageError(DragomanError):
    code = "package_error"


class OfflineError(PackageError):
    """A network access while ``DRAGOMAN_OFFLINE`` is set."""


class NoSpace(PackageError):
    code = "no_space"
