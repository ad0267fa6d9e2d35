"""A JSON dump whose members have other types than the tool writes (edited by hand, cut and mended,
written by another version) gives threads or a clear error, never a crash.

GIVEN each real JSON capture (py-spy --json, jcmd Thread.dump_to_file -format=json, Spring Boot
Actuator's /threaddump) with members deleted or replaced by values of every JSON type, at random
but reproducibly, WHEN it is read as its format, THEN the reader yields dumps or raises kafkadiag's
own error.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.errors import KafkadiagError
from kafkadiag.model import DumpFormat

from ..conftest import CAPTURED

CAPTURES = {
    "py-poll-queue-full/py-spy-dump-locals.json": DumpFormat.PYSPY_JSON,
    "virtual-threads/thread-dump.json": DumpFormat.JCMD_JSON,
    "real-new-consumer-coordinator-unavailable-3.9.1/actuator-threaddump.json": DumpFormat.ACTUATOR_JSON,
}
# One of each JSON type, and the shapes a member of another type most often has.
REPLACEMENTS: list[Any] = [None, 1, -5, 10**30, 3.5, True, "", "x", [], [None], [1], {}, {"a": 1}]
VARIANTS = 300


def mutated(document: Any, chooser: random.Random) -> Any:
    """The document with about one member in ten deleted or replaced, at every depth."""
    if isinstance(document, dict):
        result = {}
        for key, value in document.items():
            roll = chooser.random()
            if roll < 0.04:
                continue
            result[key] = chooser.choice(REPLACEMENTS) if roll < 0.1 else mutated(value, chooser)
        return result
    if isinstance(document, list):
        return [
            chooser.choice(REPLACEMENTS) if chooser.random() < 0.08 else mutated(item, chooser)
            for item in document
        ]
    return copy.copy(document)


@pytest.mark.parametrize(("relative", "dump_format"), CAPTURES.items(), ids=list(CAPTURES))
def test_members_of_any_type_give_threads_or_a_clear_error(
    tmp_path: Path, relative: str, dump_format: DumpFormat
) -> None:
    document = json.loads((CAPTURED / relative).read_text(encoding="utf-8"))
    chooser = random.Random(20261127)
    read = refused = 0
    for number in range(VARIANTS):
        path = tmp_path / f"variant-{number}.json"
        path.write_text(json.dumps(mutated(document, chooser), indent=2), encoding="utf-8")
        try:
            for dump in read_dumps(str(path), dump_format):
                assert dump.format is dump_format
                read += 1
        except KafkadiagError:
            refused += 1
    assert read > 0  # the mutations leave most documents readable: the test reads, not only refuses
