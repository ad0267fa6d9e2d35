"""The old consumer's ZooKeeper nodes, read through kazoo."""
