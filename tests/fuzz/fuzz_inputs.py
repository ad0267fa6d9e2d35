"""Coverage-guided fuzzing of every dump format and the capture-bundle manifest reader (atheris).

    python tests/fuzz/fuzz_inputs.py [libFuzzer options] CORPUS_DIR [SEED_DIR ...]

tests/fuzz/test_fuzzing.py runs it for about a minute, seeded from the captured fixtures; run it
longer by hand with -max_total_time=SECONDS. Each input is read by tests/fuzz/harness.exercise:
a crash, a parser that stopped part-way, a rule that crashed or an input slower than -timeout is
written as an artifact (-artifact_prefix) and belongs in tests/fuzz/crashes/, which a normal test
replays.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

with atheris.instrument_imports(include=["kafkadiag"]):
    from tests.fuzz.harness import exercise, import_everything

    import_everything()

WORKDIR = Path(tempfile.mkdtemp(prefix="kafkadiag-fuzz-"))


def test_one_input(data: bytes) -> None:
    exercise(data, WORKDIR)


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
