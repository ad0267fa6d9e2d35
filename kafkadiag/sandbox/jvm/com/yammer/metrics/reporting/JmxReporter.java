package com.yammer.metrics.reporting;

import java.lang.management.ManagementFactory;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/** Replica of the part of Yammer Metrics 2.2's JmxReporter that the Kafka 0.8.x-0.11 clients
 *  publish their metrics through: every gauge is a {@code JmxReporter$Gauge} standard MBean with one
 *  attribute, Value, and every meter a {@code JmxReporter$Meter} (Count, EventType, RateUnit,
 *  MeanRate, OneMinuteRate, FiveMinuteRate, FifteenMinuteRate). They are registered in the
 *  platform MBean server under the object name Kafka's KafkaMetricsGroup builds, so JMX clients
 *  (jconsole, the JMX exporter, Jolokia, kafkadiag) see what they see on a real consumer. */
public class JmxReporter {
    private static final MBeanServer SERVER = ManagementFactory.getPlatformMBeanServer();
    // Yammer ticks its exponentially weighted moving averages every 5 seconds on this thread.
    private static final ScheduledExecutorService TICKER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "metrics-meter-tick-thread-1");
        t.setDaemon(true);
        return t;
    });

    public interface MetricMBean {
        ObjectName objectName();
    }

    public interface GaugeMBean extends MetricMBean {
        Object getValue();
    }

    public interface MeterMBean extends MetricMBean {
        long getCount();
        String getEventType();
        TimeUnit getRateUnit();
        double getMeanRate();
        double getOneMinuteRate();
        double getFiveMinuteRate();
        double getFifteenMinuteRate();
    }

    public static class Gauge implements GaugeMBean {
        private final ObjectName name;
        private final Supplier<Object> value;

        Gauge(ObjectName name, Supplier<Object> value) {
            this.name = name;
            this.value = value;
        }

        @Override
        public ObjectName objectName() {
            return name;
        }

        @Override
        public Object getValue() {
            return value.get();
        }
    }

    /** A meter with Yammer's EWMA arithmetic (5 s ticks, 1/5/15-minute windows). */
    public static class Meter implements MeterMBean {
        private final ObjectName name;
        private final String eventType;
        private final AtomicLong count = new AtomicLong();
        private final long startNanos = System.nanoTime();
        private final Ewma m1 = new Ewma(1), m5 = new Ewma(5), m15 = new Ewma(15);

        Meter(ObjectName name, String eventType) {
            this.name = name;
            this.eventType = eventType;
            TICKER.scheduleAtFixedRate(() -> { m1.tick(); m5.tick(); m15.tick(); }, 5, 5, TimeUnit.SECONDS);
        }

        public void mark(long n) {
            count.addAndGet(n);
            m1.update(n);
            m5.update(n);
            m15.update(n);
        }

        @Override public ObjectName objectName() { return name; }
        @Override public long getCount() { return count.get(); }
        @Override public String getEventType() { return eventType; }
        @Override public TimeUnit getRateUnit() { return TimeUnit.SECONDS; }
        @Override public double getOneMinuteRate() { return m1.rate(); }
        @Override public double getFiveMinuteRate() { return m5.rate(); }
        @Override public double getFifteenMinuteRate() { return m15.rate(); }

        @Override
        public double getMeanRate() {
            double elapsed = (System.nanoTime() - startNanos) / 1e9;
            return elapsed <= 0 ? 0.0 : count.get() / elapsed;
        }
    }

    static final class Ewma {
        private final double alpha;
        private final AtomicLong uncounted = new AtomicLong();
        private volatile boolean initialized;
        private volatile double rate; // events per second

        Ewma(int minutes) {
            this.alpha = 1 - Math.exp(-5.0 / 60.0 / minutes);
        }

        void update(long n) {
            uncounted.addAndGet(n);
        }

        void tick() {
            double instantRate = uncounted.getAndSet(0) / 5.0;
            if (initialized) {
                rate += alpha * (instantRate - rate);
            } else {
                rate = instantRate;
                initialized = true;
            }
        }

        double rate() {
            return rate;
        }
    }

    public static Gauge gauge(String objectName, Supplier<Object> value) {
        try {
            ObjectName name = new ObjectName(objectName);
            Gauge gauge = new Gauge(name, value);
            SERVER.registerMBean(gauge, name);
            return gauge;
        } catch (JMException e) {
            throw new IllegalStateException("cannot register " + objectName, e);
        }
    }

    public static Meter meter(String objectName, String eventType) {
        try {
            ObjectName name = new ObjectName(objectName);
            Meter meter = new Meter(name, eventType);
            SERVER.registerMBean(meter, name);
            return meter;
        } catch (JMException e) {
            throw new IllegalStateException("cannot register " + objectName, e);
        }
    }

    public static void unregister(ObjectName name) {
        try {
            SERVER.unregisterMBean(name);
        } catch (JMException e) {
            // already gone
        }
    }
}
