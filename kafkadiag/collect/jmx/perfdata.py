"""Read a HotSpot JVM's performance counters (the hsperfdata file), the way jcmd and jconsole do.

The JVM maps /tmp/hsperfdata_<user>/<pid> and publishes counters in it, among them
`sun.management.JMXConnectorServer.address`: the local JMX connector's address once the
management agent runs. Reading it costs no JVM start and sends the target nothing, so kafkadiag
only runs `jcmd ... ManagementAgent.start_local` when the address is not there yet.

Format (HotSpot perfMemory.hpp, PerfDataPrologue version 2.0): magic 0xcafec0c0, byte order,
major, minor, accessible, used, overflow, mod time stamp, entry offset, entry count; then entries
of (length, name offset, vector length, type 'B'|'J', flags, units, variability, data offset).
"""

from __future__ import annotations

import os
import struct
import tempfile

MAGIC = b"\xca\xfe\xc0\xc0"
CONNECTOR_ADDRESS = "sun.management.JMXConnectorServer.address"
# A JVM caps its perfdata at -XX:PerfDataMemorySize (32 KiB by default); anything far larger is not one.
MAX_BYTES = 16 * 1024 * 1024


def perfdata_paths(pid: int, user: str) -> list[str]:
    """Where the counters of `pid` may be: through /proc/<pid>/root (a container's own /tmp, with
    the namespace's pid) and in this host's temp directory."""
    paths = []
    namespace_pid = pid
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as status:
            for line in status:
                if line.startswith("NSpid:"):
                    namespace_pid = int(line.split()[-1])
    except (OSError, ValueError):
        pass
    paths.append(f"/proc/{pid}/root/tmp/hsperfdata_{user}/{namespace_pid}")
    paths.append(os.path.join(tempfile.gettempdir(), f"hsperfdata_{user}", str(pid)))
    return paths


def read_counters(path: str) -> dict[str, str | int]:
    """Every counter in the file; raises OSError or ValueError when it is not a perfdata file."""
    with open(path, "rb") as handle:
        data = handle.read(MAX_BYTES)
    if len(data) < 32 or data[:4] != MAGIC:
        raise ValueError(f"{path} is not a HotSpot perfdata file")
    order = "<" if data[4] == 1 else ">"
    entry_offset, entries = struct.unpack_from(order + "ii", data, 24)
    counters: dict[str, str | int] = {}
    offset = entry_offset
    for _ in range(max(entries, 0)):
        if offset + 20 > len(data):
            break
        length, name_offset, vector_length = struct.unpack_from(order + "iii", data, offset)
        data_type = data[offset + 12 : offset + 13]
        (data_offset,) = struct.unpack_from(order + "i", data, offset + 16)
        if length <= 0:
            break
        name_start = offset + name_offset
        name_end = data.find(b"\0", name_start, offset + length)
        name = data[name_start:name_end].decode("ascii", "replace") if name_end > name_start else ""
        value_start = offset + data_offset
        if data_type == b"B" and vector_length > 0:
            raw = data[value_start : value_start + vector_length]
            counters[name] = raw.split(b"\0", 1)[0].decode("utf-8", "replace")
        elif data_type == b"J" and value_start + 8 <= len(data):
            (counters[name],) = struct.unpack_from(order + "q", data, value_start)
        offset += length
    return counters


def connector_address(pid: int, user: str) -> str | None:
    """The local JMX connector address the JVM published, or None (not started, or no perfdata)."""
    for path in perfdata_paths(pid, user):
        try:
            value = read_counters(path).get(CONNECTOR_ADDRESS)
        except (OSError, ValueError, struct.error):
            continue
        if isinstance(value, str) and value.startswith("service:jmx:"):
            return value
    return None
