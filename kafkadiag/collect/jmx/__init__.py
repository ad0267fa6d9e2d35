"""The consumer's own metrics over JMX: a local JVM through its attach mechanism (`jvm`), a remote
JMX port, a Jolokia agent, a Prometheus JMX exporter; Kafka's MBean names across versions
(`kafka`, `names`)."""
