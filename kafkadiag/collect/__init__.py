"""Collectors: read offsets, owners and watermarks from ZooKeeper and brokers, never judge.

Everything here is read-only against the systems it talks to: no znode is written, no offset is
committed and no consumer group is joined. Collectors return `snapshot.Snapshot` values (plain,
picklable, JSON-serialisable data with provenance) for `kafkadiag.lag` to evaluate.
"""
