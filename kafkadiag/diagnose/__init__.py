"""`kafkadiag diagnose`: every source at once (committed offsets, the consumer's metrics, its
thread dumps), joined by what links them in Kafka into one story and one vocabulary of findings."""
