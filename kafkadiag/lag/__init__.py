"""Lag arithmetic over snapshots: lag, rates, Burrow statuses, and the
groups the KD6xx rules (kafkadiag.rules.lagfamily) judge. No I/O.

Everything here takes snapshots (`kafkadiag.lag.snapshot`: what the collectors read, as plain
data) and returns frozen dataclasses, so the same evaluation runs on a live read, on `--samples`,
and offline on recorded snapshots. Nothing here imports the collectors.
"""
