"""The SMR block of a dump taken while HotSpot frees a thread list.

JDK 11+ prints `Threads class SMR info:` and `_java_thread_list=...` before the threads; while a
thread list is being freed (threads starting or ending as the dump is taken) it adds
`_to_delete_list=0x..., length=N, elements={`, its addresses and `}`. Apache Kafka's real consumer
(kafka-clients 4.1.1, fixtures/captured/real-new-consumer-shared-consumer-4.1.1) was dumped so, four
times in one JVM: the line was kept as one the parser did not understand, and the analysis read "No
stall found in what could be read ... with 1 caveat".
"""

from __future__ import annotations

import pytest

from kafkadiag.dumps import read_dumps

from ..conftest import CAPTURED

SCENARIO = CAPTURED / "real-new-consumer-shared-consumer-4.1.1"


@pytest.mark.parametrize(
    "name", ["jstack-l.txt", "jstack.txt", "jcmd-thread-print-l.txt", "kill3-stdout.log"]
)
def test_the_delete_list_is_part_of_the_smr_block(name: str) -> None:
    path = SCENARIO / name
    assert "\n_to_delete_list=0x" in path.read_text()
    dumps = list(read_dumps(str(path)))
    assert dumps and all(dump.unparsed_count == 0 for dump in dumps)
    for dump in dumps:
        assert not any(thread.name.startswith(("_to_delete_list", "0x")) for thread in dump.threads)
        assert dump.thread_named("fulfilment-poll") is not None
