"""Forms and query strings read as text the same way by every route: percent-decoded, then
decoded in the charset in force (UTF-8 unless ``Content-Type``, a part's own header or the
form's ``_charset_`` field says otherwise), strictly. Starlette decodes urlencoded bytes as
Latin-1 and falls back to Latin-1 on a multipart field it cannot decode: raw UTF-8 from
``curl -d`` came out as mojibake. Here a byte that is not valid text is ``BadEncoding``
naming the field, never a replacement character."""

from __future__ import annotations

import codecs
from urllib.parse import unquote_to_bytes

from fastapi import Request
from starlette.datastructures import FormData, UploadFile
from starlette.formparsers import MultiPartParser

from dragoman.errors import BadEncoding, DragomanError, InvalidRequest, UnsupportedFormat

_URLENCODED = "application/x-www-form-urlencoded"
_MULTIPART = "multipart/form-data"
FORM_TYPES = (_URLENCODED, _MULTIPART)


def media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


def charset_of(content_type: str, default: str = "utf-8") -> str:
    """The codec a ``Content-Type`` names with ``charset=``, or ``default``."""
    for param in content_type.split(";")[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            return _codec(value.strip().strip('"'))
    return default


def _codec(name: str) -> str:
    try:
        return codecs.lookup(name).name
    except LookupError:
        raise UnsupportedFormat(f"charset {name!r} is not one dragoman can read") from None


def decode(raw: bytes, charset: str, field: str) -> str:
    try:
        return raw.decode(charset)
    except UnicodeDecodeError as exc:
        raise BadEncoding(
            f"{field}: byte {exc.start} is not valid {charset}; send the text as {charset}"
            " or name its charset in Content-Type"
        ) from None


def parse_urlencoded(raw: bytes, charset: str = "utf-8") -> list[tuple[str, str]]:
    """``a=1&b=%C3%A9`` (or the raw bytes of ``é``) as pairs, in order, blanks kept."""
    items = []
    for piece in raw.split(b"&"):
        if not piece:
            continue
        name, _, value = piece.partition(b"=")
        key = decode(unquote_to_bytes(name.replace(b"+", b" ")), charset, "a field name")
        items.append((key, decode(unquote_to_bytes(value.replace(b"+", b" ")), charset, key)))
    return items


def query_items(request: Request) -> list[tuple[str, str]]:
    """The query string's pairs, decoded as UTF-8 strictly."""
    return parse_urlencoded(request.scope.get("query_string", b""))


class _Raw(bytes):
    """A plain multipart field's bytes, with the charset of its own ``Content-Type``."""

    charset: str | None = None


class _StrictMultiPartParser(MultiPartParser):
    """Keeps plain fields as bytes while parsing; they are decoded at the end, once the
    form's ``_charset_`` field (which may come last) is known."""

    def on_part_end(self) -> None:
        part = self._current_part
        if part.file is not None:
            super().on_part_end()
            return
        raw = _Raw(part.data)
        headers = dict(part.item_headers)
        if b"content-type" in headers:
            raw.charset = charset_of(headers[b"content-type"].decode("latin-1"), "") or None
        self.items.append((part.field_name, raw))  # type: ignore[arg-type]


async def read_form(
    request: Request, *, max_files: int, max_fields: int, max_part_size: int = 1024 * 1024
) -> FormData:
    """The urlencoded or multipart body of ``request`` with every text field decoded
    strictly; ``InvalidRequest`` for a body that is not a form at all."""
    kind = media_type(request)
    charset = charset_of(request.headers.get("content-type", ""))
    if kind == _URLENCODED:
        fields: list[tuple[str, str | UploadFile]] = []
        fields += parse_urlencoded(await request.body(), charset)
        if len(fields) > max_fields:
            raise InvalidRequest(f"body: more than {max_fields} form fields")
        return FormData(fields)
    parser = _StrictMultiPartParser(
        request.headers,
        request.stream(),
        max_files=max_files,
        max_fields=max_fields,
        max_part_size=max_part_size,
    )
    try:
        form = await parser.parse()
    except DragomanError:
        raise
    except Exception as exc:  # the multipart parser's errors have no common type
        raise InvalidRequest(f"body: not a valid multipart form ({exc})") from None
    try:
        return _decoded(form, charset)
    except DragomanError:
        await form.close()
        raise


def _decoded(form: FormData, charset: str) -> FormData:
    fallback = charset
    for key, value in form.multi_items():
        if key == "_charset_" and isinstance(value, bytes):
            fallback = _codec(decode(value, "ascii", "_charset_").strip())
    items: list[tuple[str, str | UploadFile]] = []
    for key, value in form.multi_items():
        if isinstance(value, _Raw):
            items.append((key, decode(bytes(value), value.charset or fallback, key)))
        else:
            items.append((key, value))
    return FormData(items)
