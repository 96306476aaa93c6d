"""Checks of an FMU archive before anything is decompressed: method, size, member count, CRC.

An FMU is a zip archive that FMI allows to use only the *store* and *deflate* methods.  A small
archive can still unpack to gigabytes (a "zip bomb"): a 12.8 kB file with one bzip2 member
inflates to 3 GiB.  :func:`check_archive` reads only the central directory — no member is
decompressed — and refuses an archive that uses another method, declares more unpacked bytes
than :data:`MAX_UNPACKED_BYTES` or more members than :data:`MAX_MEMBERS`.  Both limits are
generous defaults that a user with a genuinely huge FMU raises through the environment
variables ``FMU_SURROGATE_MAX_UNPACKED`` (bytes, or with a suffix: ``8GiB``, ``500MB``) and
``FMU_SURROGATE_MAX_MEMBERS`` (worker processes inherit them).

Decompression cannot produce more than the declared size (Python's zip reader stops there and
then checks the CRC), so the declared total bounds what extraction writes.
:func:`verify_members` checks CRCs by streaming chunks, never holding a member in memory.
"""

from __future__ import annotations

import os
import re
import zipfile
from collections.abc import Iterable
from pathlib import Path

from fmu_surrogate.fmu.errors import NotAnFMUError

__all__ = [
    "MAX_MEMBERS",
    "MAX_UNPACKED_BYTES",
    "ArchiveLimitError",
    "check_archive",
    "verify_members",
]

#: default limit of the total unpacked size of an FMU archive (bytes)
MAX_UNPACKED_BYTES = 2 * 1024**3
#: default limit of the number of members of an FMU archive
MAX_MEMBERS = 100_000
#: compression methods FMI allows
ALLOWED_METHODS = {zipfile.ZIP_STORED: "store", zipfile.ZIP_DEFLATED: "deflate"}
_METHOD_NAMES = {zipfile.ZIP_BZIP2: "bzip2", zipfile.ZIP_LZMA: "lzma", 93: "zstandard"}
_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


class ArchiveLimitError(NotAnFMUError):
    """The archive breaks a limit (method, unpacked size, member count); the message says which
    limit and how to raise it."""


def _size_text(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:.1f} GiB"  # pragma: no cover


def _parse_size(text: str) -> int:
    m = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]*)\s*", text)
    if not m or m.group(2).upper() not in _UNITS:
        raise ArchiveLimitError(f"FMU_SURROGATE_MAX_UNPACKED={text!r} is not a size; write e.g. "
                                f"8GiB, 500MB or a number of bytes.")
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


def limits() -> tuple[int, int]:
    """The limits in force: ``(max unpacked bytes, max members)`` (environment or defaults).

    Returns
    -------
    tuple of int
        ``(max_unpacked, max_members)``.
    """
    size = os.environ.get("FMU_SURROGATE_MAX_UNPACKED")
    count = os.environ.get("FMU_SURROGATE_MAX_MEMBERS")
    max_unpacked = _parse_size(size) if size else MAX_UNPACKED_BYTES
    try:
        max_members = int(count) if count else MAX_MEMBERS
    except ValueError:
        raise ArchiveLimitError(f"FMU_SURROGATE_MAX_MEMBERS={count!r} is not an integer.") \
            from None
    return max_unpacked, max_members


def check_archive(z: zipfile.ZipFile, path: str | os.PathLike) -> list[zipfile.ZipInfo]:
    """Refuse an archive that breaks a limit, from its central directory alone.

    Parameters
    ----------
    z : zipfile.ZipFile
        The open archive (only its central directory has been read).
    path : path
        Its path, for messages.

    Returns
    -------
    list of zipfile.ZipInfo
        The members.

    Raises
    ------
    ArchiveLimitError
        A member uses a method other than store/deflate, or the archive declares more unpacked
        bytes or members than the limits allow.
    """
    max_unpacked, max_members = limits()
    infos = z.infolist()
    if len(infos) > max_members:
        raise ArchiveLimitError(
            f"{path} has {len(infos)} members, above the limit of {max_members}; if this FMU is "
            f"genuine, raise the limit with FMU_SURROGATE_MAX_MEMBERS={len(infos)}.")
    for info in infos:
        if info.compress_type not in ALLOWED_METHODS:
            method = _METHOD_NAMES.get(info.compress_type, f"method {info.compress_type}")
            raise ArchiveLimitError(
                f"{path}: member {info.filename!r} is compressed with {method}, but FMI archives "
                f"may only use store or deflate; refused without unpacking it (a zip bomb?). "
                f"Re-zip the FMU with deflate (e.g. `zip -r -Z deflate`).")
    total = sum(info.file_size for info in infos)
    if total > max_unpacked:
        raise ArchiveLimitError(
            f"{path} unpacks to {_size_text(total)}, above the limit of "
            f"{_size_text(max_unpacked)}; refused without unpacking it (a zip bomb?). If this FMU "
            f"is genuine, raise the limit with "
            f"FMU_SURROGATE_MAX_UNPACKED={_size_text(total * 1.01).replace(' ', '')}.")
    return infos


def verify_members(z: zipfile.ZipFile, path: str | os.PathLike,
                   names: Iterable[str] | None = None, chunk: int = 1 << 20) -> None:
    """Check the CRC of members by streaming them in chunks (bounded memory).

    Parameters
    ----------
    z : zipfile.ZipFile
        The open archive (:func:`check_archive` passed).
    path : path
        Its path, for messages.
    names : iterable of str, optional
        Members to check (default: all).
    chunk : int
        Bytes read at a time.

    Raises
    ------
    NotAnFMUError
        A member is truncated or fails its CRC check.
    """
    for name in (names if names is not None else z.namelist()):
        if name.endswith("/"):
            continue
        try:
            with z.open(name) as f:
                while f.read(chunk):
                    pass
        except (zipfile.BadZipFile, EOFError, OSError) as exc:
            raise NotAnFMUError(
                f"{Path(path)} is corrupt (member {name!r}: {exc}); re-export or re-download the "
                f"FMU.") from exc
