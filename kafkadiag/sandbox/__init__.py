"""The embedded sandbox behind `kafkadiag demo`: real Apache Kafka (ZooKeeper and a broker from
Kafka's released jars, fetched from Maven Central on first use), live producers, and consumers
that kafkadiag observes exactly as it observes production ones: an order service on Kafka 0.8.2.2's
own old consumer, a billing service on kafka-python.

Everything binds to 127.0.0.1 on free ports and every process is stopped by its PID. Only this
package (and the tests) start servers; the diagnosis itself stays read-only.
"""
