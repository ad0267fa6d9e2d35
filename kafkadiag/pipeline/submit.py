"""`spark-submit [spark options] .../kafkadiag/pipeline/submit.py INPUT... --out DIR`: the batch
job as a PySpark application; arguments are `kafkadiag batch`'s, the master is spark-submit's."""

from __future__ import annotations

import sys

if __name__ == "__main__":
    from kafkadiag.commands.batch import batch_command
    from kafkadiag.commands.entry import run

    sys.exit(run(batch_command, sys.argv[1:], prog_name="kafkadiag batch"))
