"""The embedded sandbox behind `kafkadiag demo`: a real ZooKeeper, a real Kafka-protocol broker,
live producers and consumers that kafkadiag observes exactly as it observes production ones.

Everything binds to 127.0.0.1 on free ports and every process is stopped by its PID. Only this
package (and the tests) start servers; the diagnosis itself stays read-only.
"""
