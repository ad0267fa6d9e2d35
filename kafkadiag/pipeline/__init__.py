"""The batch pipeline (`kafkadiag batch`): the same analysis as the CLI, run as a Spark job.

Only this package imports pyspark, and only in `session` and `job`: the functions that run in
the executors (`units`, `work`) are plain Python over kafkadiag's own parsers and rules, so the
Spark path and the CLI cannot drift apart.
"""
