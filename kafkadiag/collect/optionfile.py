"""The small files options name (--command-config, --zk-tls-config-file, --zk-jaas-file,
--consumer-config, `check --config`, `--prometheus FILE`): read within a size bound and a time
bound, as UTF-8 text, or refused with the reason.

Each is a few KB that a person wrote or a tool saved. What arrives instead: a FIFO nobody writes
into (open() waited for a writer forever), /dev/zero (read until the kernel killed the process),
a binary or Latin-1 file (a UnicodeDecodeError traceback and exit 4). A pipe or a FIFO is still
read, for at most WAIT_S: `--command-config <(vault read ...)` keeps a password off the disk.
"""

from __future__ import annotations

import os
import select
import stat
import time

from kafkadiag.readlimits import MIB, file_kind, format_size

# A properties, JAAS or TOML file is a few KB; a check policy of a thousand rules is 100 KB.
MAX_OPTION_FILE_BYTES = 16 * MIB
# A pipe's writer (`<(vault read ...)`) answers within seconds; a terminal or an idle FIFO never.
WAIT_S = 10.0
_CHUNK = 1 * MIB


class OptionFileError(Exception):
    """Why a file cannot be read; the message completes "cannot read PATH: "."""


def read_option_text(path: str, max_bytes: int = MAX_OPTION_FILE_BYTES, wait_s: float = WAIT_S) -> str:
    """The UTF-8 text of `path` (a file, a pipe, a FIFO or a character device), at most
    `max_bytes` of it within `wait_s` seconds; OptionFileError otherwise."""
    data = read_option_bytes(path, max_bytes, wait_s)
    if b"\x00" in data:
        raise OptionFileError("it holds NUL bytes: a binary file, not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise OptionFileError(
            f"it is not UTF-8 text (byte 0x{data[error.start]:02x} at offset {error.start}); save it as UTF-8"
        ) from None


def read_option_bytes(path: str, max_bytes: int = MAX_OPTION_FILE_BYTES, wait_s: float = WAIT_S) -> bytes:
    """The bytes of `path`, bounded as read_option_text bounds them."""
    try:
        # O_NONBLOCK: opening a FIFO does not wait for a writer, and reading it or a terminal
        # waits only as long as _read_within allows.
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise OptionFileError(error.strerror or str(error)) from None
    try:
        mode = os.fstat(descriptor).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
            raise OptionFileError(f"it is {file_kind(mode)}, not a file")
        data = _read_within(descriptor, max_bytes + 1, wait_s)
        if not data and not stat.S_ISREG(mode):  # a FIFO without a writer reads as empty at once
            raise OptionFileError(f"nothing arrived from it ({file_kind(mode)} nobody writes into?)")
    except OSError as error:
        raise OptionFileError(error.strerror or str(error)) from None
    finally:
        os.close(descriptor)
    if len(data) > max_bytes:
        raise OptionFileError(f"it is larger than {format_size(max_bytes)}, far more than such a file holds")
    return data


def pem_file_problem(path: str) -> str | None:
    """Why the file a TLS setting names cannot be the PEM file OpenSSL expects, or None. Told
    before connecting: OpenSSL's error (NO_CERTIFICATE_OR_CRL_FOUND) came as a server that could
    not be reached. Only a regular file is looked at: a pipe (`<(vault read ...)`) is left whole
    for OpenSSL, which reads it once, and a missing file is OpenSSL's to name."""
    if not os.path.isfile(path):
        return None
    try:
        data = read_option_bytes(path)
    except OptionFileError as error:
        return str(error)
    if b"-----BEGIN " in data:
        return None
    if b"\x00" in data or not data.isascii():
        return "it is binary, not PEM text (a DER file converts with `openssl x509 -inform der`)"
    return "it holds no PEM block (-----BEGIN ...)"


def _read_within(descriptor: int, limit: int, wait_s: float) -> bytes:
    chunks: list[bytes] = []
    size = 0
    deadline = time.monotonic() + wait_s
    while size < limit:
        try:
            chunk = os.read(descriptor, min(limit - size, _CHUNK))
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                raise OptionFileError(f"nothing more arrived from it in {wait_s:g} s") from None
            select.select([descriptor], [], [], left)
            continue
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)
