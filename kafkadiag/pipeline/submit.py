"""`spark-submit [spark options] .../kafkadiag/pipeline/submit.py INPUT... --out DIR`: the batch
job as a PySpark application; arguments are `kafkadiag batch`'s, the master is spark-submit's."""

from __future__ import annotations

import sys

if __name__ == "__main__":
    from kafkadiag.cli import main

    sys.exit(main(["batch", *sys.argv[1:]]))
