"""Lag arithmetic over snapshots: lag, ownership checks, rates, Burrow statuses. No I/O.

Everything here takes `kafkadiag.collect.snapshot` values and returns frozen dataclasses, so the
same evaluation runs on a live read, on `--samples`, and offline on recorded snapshots.
"""
