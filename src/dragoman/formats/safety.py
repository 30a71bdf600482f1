"""Reading untrusted files: XML without entities or network, zips with bounded members,
text in a declared encoding."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Mapping

from lxml import etree

from dragoman.errors import InvalidFile

MAX_ZIP_MEMBERS = 5_000
MAX_UNZIPPED_BYTES = 256 * 2**20
MAX_RATIO = 200  # uncompressed / compressed, per member above 1 MiB
# What ``zipfile`` raises for a damaged archive: besides ``BadZipFile``, a header that
# points before the start ("negative seek value"), a truncated stream, bad deflate data.
_DAMAGED = (zipfile.BadZipFile, ValueError, OSError, EOFError, struct.error, zlib.error)


def parser(*, recover: bool = False, remove_blank_text: bool = False) -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_blank_text=remove_blank_text,
        recover=recover,
        strip_cdata=False,
        remove_comments=False,
        remove_pis=False,
    )


def parse_xml(data: bytes, filename: str) -> etree._ElementTree:
    """The document; ``InvalidFile`` with the line for malformed XML, and for any DTD that
    declares entities (XXE, entity expansion) or any entity reference left unresolved."""
    try:
        tree = etree.ElementTree(etree.fromstring(data, parser()))
    except etree.XMLSyntaxError as exc:
        line = exc.lineno or (exc.position[0] if exc.position else 0)
        raise InvalidFile(f"{filename}: malformed XML at line {line}: {exc.msg}") from None
    dtd = tree.docinfo.internalDTD
    if dtd is not None and (list(dtd.iterentities()) or dtd.external_id or dtd.system_url):
        raise InvalidFile(f"{filename}: a DTD that declares entities is refused")
    if tree.docinfo.system_url or tree.docinfo.public_id:
        raise InvalidFile(f"{filename}: an external DTD is refused")
    for node in tree.iter(etree.Entity):
        raise InvalidFile(f"{filename}: line {node.sourceline}: entity {node.text} is undefined")
    return tree


def serialize_xml(tree: etree._ElementTree, original: bytes) -> bytes:
    """The tree as bytes, with the original's XML declaration (or none) and encoding."""
    encoding = tree.docinfo.encoding or "UTF-8"
    if original.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16: its declaration anew
        declared = original[2:].decode(
            "utf-16-be" if original[0] == 0xFE else "utf-16-le", "ignore"
        )
        return etree.tostring(tree, encoding=encoding, xml_declaration=declared.startswith("<?xml"))
    has_decl = original.lstrip(b"\xef\xbb\xbf").startswith(b"<?xml")
    body: bytes = etree.tostring(tree, encoding=encoding, xml_declaration=False, standalone=None)
    if has_decl:
        end = original.index(b"?>") + 2
        decl = original[original.index(b"<?xml") : end]
        prefix = original[: original.index(b"<?xml")]
        between = original[end : end + len(original[end:]) - len(original[end:].lstrip())]
        return prefix + decl + between + body + _tail(original)
    return body + _tail(original)


def _tail(original: bytes) -> bytes:
    stripped = original.rstrip()
    return original[len(stripped) :] if stripped.endswith(b">") else b""


def read_zip(data: bytes, filename: str) -> dict[str, bytes]:
    """Every member's bytes, in the archive's order; ``InvalidFile`` for what is not a zip,
    too many members, or what would unzip to too much."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except _DAMAGED:
        raise InvalidFile(f"{filename}: not a zip archive, as this format must be") from None
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_ZIP_MEMBERS:
            raise InvalidFile(f"{filename}: more than {MAX_ZIP_MEMBERS} members in the archive")
        total = sum(i.file_size for i in infos)
        if total > MAX_UNZIPPED_BYTES:
            raise InvalidFile(f"{filename}: unzips to more than {MAX_UNZIPPED_BYTES} bytes")
        for info in infos:
            if info.file_size > 2**20 and info.file_size > MAX_RATIO * max(info.compress_size, 1):
                raise InvalidFile(f"{filename}: {info.filename} is compressed suspiciously well")
        members: dict[str, bytes] = {}
        for info in infos:
            try:
                with archive.open(info) as member:
                    content = member.read(info.file_size + 1)
            except (*_DAMAGED, NotImplementedError) as exc:
                raise InvalidFile(f"{filename}: {info.filename} cannot be read: {exc}") from None
            if len(content) > info.file_size:
                raise InvalidFile(f"{filename}: {info.filename} is larger than it declares")
            members[info.filename] = content
        return members


def write_zip(original: bytes, replaced: Mapping[str, bytes]) -> bytes:
    """The archive again, members in the same order with the same names, dates and
    compression; the members in ``replaced`` get their new bytes."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(original)) as source,
        zipfile.ZipFile(out, "w") as target,
    ):
        for info in source.infolist():
            content = replaced.get(info.filename)
            if content is None:
                content = source.read(info)
            clone = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            clone.compress_type = info.compress_type
            clone.external_attr = info.external_attr
            clone.create_system = info.create_system
            clone.comment = info.comment
            clone.extra = info.extra
            target.writestr(clone, content)
        target.comment = source.comment
    return out.getvalue()


def decode_text(data: bytes, filename: str) -> tuple[str, str]:
    """``(text, encoding)``: UTF-8 (a BOM kept) or UTF-16 with its BOM; else ``InvalidFile``."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), "utf-16"
        except UnicodeDecodeError:
            pass
    else:
        encoding = "utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "utf-8"
        try:
            return data.decode(encoding), encoding
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise InvalidFile(
                f"{filename}: line {line} is not UTF-8; text files must be UTF-8 "
                "(or UTF-16 with a byte-order mark)"
            ) from None
    raise InvalidFile(f"{filename}: not valid UTF-16")


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1
