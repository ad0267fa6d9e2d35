"""VisualVM / NetBeans thread dumps: the `"name" - Thread t@N` rendering.

VisualVM prints this form for applications it reaches over JMX (ThreadMXBean, not jstack):

    "worker-1" - Thread t@12
       java.lang.Thread.State: BLOCKED
        at com.example.Worker.run(Worker.java:10)
        - waiting to lock <5a2e4553> (a java.lang.Object) owned by "worker-0" t@11

       Locked ownable synchronizers:
        - locked <1e3c3a2b> (a java.util.concurrent.ThreadPoolExecutor$Worker)

Apart from the header and the `owned by` suffix it is HotSpot's layout, so the HotSpot parser
reads it; lock ids are identity hashes rather than addresses, which is all a lock graph needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from kafkadiag.dumps.hotspot import parse_hotspot
from kafkadiag.model import DumpFormat, ThreadDump


def parse_netbeans(batches: Iterable[list[str]], source: str) -> Iterator[ThreadDump]:
    return parse_hotspot(batches, source, DumpFormat.NETBEANS)
