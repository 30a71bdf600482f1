"""A file sent as a download, its name readable by every browser."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import Response


def attachment(content: bytes, media_type: str, filename: str) -> Response:
    """``content`` as ``filename``: an ASCII fallback name, and the exact one (RFC 6266)
    where the fallback is not it."""
    plain = "".join(c if " " <= c <= "~" and c not in '"\\' else "_" for c in filename)
    disposition = f'attachment; filename="{plain}"'
    if plain != filename:
        disposition += f"; filename*=UTF-8''{quote(filename)}"
    return Response(content, media_type=media_type, headers={"Content-Disposition": disposition})
