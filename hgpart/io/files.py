"""Reading bytes (plain, gzip, stdin) and writing files atomically (temporary file, then rename)."""

from __future__ import annotations

import contextlib
import gzip
import os
import sys
import tempfile
import zlib

from ..errors import InputError

GZIP_MAGIC = b"\x1f\x8b"


def read_bytes(path: str) -> bytes:
    """The whole content of ``path`` (``-`` is stdin), gunzipped when it is gzip data."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as handle:
                data = handle.read()
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a file", path) from None
    except PermissionError:
        raise InputError("permission denied", path) from None
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror or error}", path) from None
    if data[:2] == GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except EOFError:
            raise InputError("truncated gzip data", path) from None
        except (OSError, zlib.error) as error:
            raise InputError(f"corrupt gzip data ({error})", path) from None
    return data


def strip_gz(path: str) -> str:
    return path[:-3] if path.endswith(".gz") else path


def named_format(path: str, given: str | None, formats, extensions: dict, kind: str = "format") -> str | None:
    """The format ``given`` (one of ``formats``, else InputError naming the ``kind``), else the one of ``path``'s
    extension (``.gz`` aside) in ``extensions``, else None (the caller sniffs the content)."""
    if given:
        if given not in formats:
            raise InputError(f"unknown {kind} {given!r} (one of {', '.join(formats)})")
        return given
    return extensions.get(os.path.splitext(strip_gz(path))[1].lower())


@contextlib.contextmanager
def atomic_output(path: str, binary: bool = False):
    """Yield a handle; on success the content replaces ``path`` in one rename, on error nothing is left.

    ``-`` writes to stdout. ``.gz`` paths are compressed.
    """
    if path == "-":
        stream = sys.stdout.buffer if binary else sys.stdout
        yield stream
        stream.flush()
        return
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, temporary = tempfile.mkstemp(prefix=".hgpart-", suffix=".tmp", dir=folder)
    except OSError as error:
        raise InputError(f"cannot write: {error.strerror or error}", path) from None
    try:
        os.chmod(temporary, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as raw:
            if path.endswith(".gz"):
                with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as zipped:
                    yield zipped if binary else _TextAdapter(zipped)
            else:
                yield raw if binary else _TextAdapter(raw)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class _TextAdapter:
    """Minimal text writer over a binary handle (UTF-8)."""

    def __init__(self, raw):
        self.raw = raw

    def write(self, text: str) -> int:
        return self.raw.write(text.encode())
