"""Fetcher MaxLag against checker lag: compare a consumer's own metrics with its committed lag.

Pure logic, no I/O: `kafkadiag.collect.jmx.kafka` extracts the consumer's metrics, the model's
`kafkadiag.consumer_metrics` holds them and the consumer's settings, `kafkadiag.lag` computes the
checker lag; `compare` explains the gap and reaches a verdict.
"""
