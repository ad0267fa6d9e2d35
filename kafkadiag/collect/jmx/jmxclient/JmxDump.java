/*
 * kafkadiag's JMX client: reads MBeans over a JMX connector and prints them as one JSON document.
 *
 * Run by kafkadiag (kafkadiag/collect/jmx.py) as `java JmxDump.java ...` (single-file source launch,
 * JDK 11+) or compiled once into kafkadiag's cache. Read-only: it calls queryNames, getMBeanInfo and
 * getAttributes, and the Threading MXBean's read-only getThreadInfo query for thread names; it never
 * sets an attribute or invokes any other operation.
 *
 *   --url URL            service:jmx:... (a local connector address, or rmi:///jndi/rmi://host:port/jmxrmi)
 *   --attributes A,B     read only these attributes of the MBeans of the following --pattern options
 *                        (one getAttributes call per MBean); "*" (the default) reads every readable
 *                        attribute (getMBeanInfo first, so two calls per MBean)
 *   --pattern P          an ObjectName pattern (repeatable)
 *   --system-property N  a system property of the target JVM to report (repeatable; via java.lang:type=Runtime)
 *   --thread-prefix P    report the names of the target's threads starting with P (repeatable)
 *   --timeout-ms N       connect and per-call timeout for RMI (default 10000)
 *
 * Credentials for remote JMX come from the environment (KAFKADIAG_JMX_USER, KAFKADIAG_JMX_PASSWORD),
 * never from the command line, so they do not show in `ps`.
 *
 * Exit codes: 0 read; 2 usage; 10 could not connect; 11 authentication refused; 12 the connection
 * broke during the read (the JVM went away). On failure stdout holds {"error": {...}}.
 */

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import javax.management.Attribute;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.openmbean.TabularData;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

public class JmxDump {
    static final int EXIT_USAGE = 2, EXIT_CONNECT = 10, EXIT_AUTH = 11, EXIT_BROKEN = 12;

    public static void main(String[] args) {
        String url = null;
        Map<String, String[]> patterns = new LinkedHashMap<>(); // pattern -> attributes, null: all
        String[] attributes = null;
        List<String> properties = new ArrayList<>();
        List<String> threadPrefixes = new ArrayList<>();
        long timeoutMs = 10_000;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--url": url = args[i + 1]; break;
                case "--attributes":
                    attributes = args[i + 1].equals("*") ? null : args[i + 1].split(",");
                    break;
                case "--pattern": patterns.put(args[i + 1], attributes); break;
                case "--system-property": properties.add(args[i + 1]); break;
                case "--thread-prefix": threadPrefixes.add(args[i + 1]); break;
                case "--timeout-ms": timeoutMs = Long.parseLong(args[i + 1]); break;
                default: fail(EXIT_USAGE, "usage", "unknown argument " + args[i], null);
            }
        }
        if (url == null || args.length % 2 != 0) fail(EXIT_USAGE, "usage", "--url is required", null);
        // RMI waits forever by default for a peer that accepted the connection but does not answer.
        String timeout = Long.toString(timeoutMs);
        System.setProperty("sun.rmi.transport.tcp.responseTimeout", timeout);
        System.setProperty("sun.rmi.transport.connectionTimeout", timeout);
        System.setProperty("sun.rmi.transport.tcp.handshakeTimeout", timeout);

        long started = System.nanoTime();
        JMXConnector connector = null;
        try {
            Map<String, Object> environment = new HashMap<>();
            String user = System.getenv("KAFKADIAG_JMX_USER");
            if (user != null && !user.isEmpty()) {
                String password = System.getenv("KAFKADIAG_JMX_PASSWORD");
                environment.put(JMXConnector.CREDENTIALS, new String[] {user, password == null ? "" : password});
            }
            try {
                connector = JMXConnectorFactory.connect(new JMXServiceURL(url), environment);
            } catch (SecurityException e) {
                fail(EXIT_AUTH, "auth", describe(e), e);
            } catch (Exception e) {
                fail(EXIT_CONNECT, "connect", describe(e), e);
            }
            long connected = System.nanoTime();
            StringBuilder out = new StringBuilder(8192);
            List<String> notes = new ArrayList<>();
            try {
                MBeanServerConnection server = connector.getMBeanServerConnection();
                out.append("{\"client\":\"kafkadiag-jmxdump\",\"version\":1,\"url\":").append(json(url));
                out.append(",\"beans\":[");
                Map<ObjectName, String[]> names = new java.util.TreeMap<>();
                for (Map.Entry<String, String[]> pattern : patterns.entrySet())
                    for (ObjectName name : server.queryNames(new ObjectName(pattern.getKey()), null))
                        names.putIfAbsent(name, pattern.getValue());
                boolean first = true;
                for (Map.Entry<ObjectName, String[]> name : names.entrySet()) {
                    if (!first) out.append(',');
                    first = false;
                    writeBean(out, server, name.getKey(), name.getValue());
                }
                out.append("],\"system_properties\":");
                writeSystemProperties(out, server, properties);
                out.append(",\"threads\":");
                StringBuilder threads = new StringBuilder();
                try {
                    writeThreads(threads, server, threadPrefixes);
                } catch (SecurityException e) {
                    // A "readonly" JMX role may read attributes but not call getThreadInfo.
                    threads.setLength(0);
                    threads.append("[]");
                    notes.add("thread names not read: " + describe(e));
                }
                out.append(threads);
                out.append(",\"vm\":");
                writeVm(out, server);
                out.append(",\"notes\":[");
                for (int i = 0; i < notes.size(); i++) out.append(i > 0 ? "," : "").append(json(notes.get(i)));
                out.append(']');
            } catch (IOException e) {
                fail(EXIT_BROKEN, "broken", describe(e), e);
            } catch (SecurityException e) {
                fail(EXIT_AUTH, "auth", describe(e), e);
            } catch (Exception e) {
                // An undeclared RMI failure (UnmarshalException wraps the peer closing the socket).
                fail(rootIsIo(e) ? EXIT_BROKEN : EXIT_CONNECT, rootIsIo(e) ? "broken" : "connect", describe(e), e);
            }
            long done = System.nanoTime();
            out.append(",\"connect_ms\":").append((connected - started) / 1_000_000.0);
            out.append(",\"read_ms\":").append((done - connected) / 1_000_000.0).append('}');
            System.out.println(out);
            System.out.flush();
        } finally {
            if (connector != null) {
                try {
                    connector.close();
                } catch (Exception ignored) {
                    // the peer may already be gone
                }
            }
        }
        System.exit(0);
    }

    static void writeBean(StringBuilder out, MBeanServerConnection server, ObjectName name, String[] wanted)
            throws Exception {
        out.append("{\"name\":").append(json(name.toString()))
                .append(",\"domain\":").append(json(name.getDomain()))
                .append(",\"key_properties\":").append(json(name.getKeyPropertyListString()))
                .append(",\"attributes\":{");
        Map<String, String> errors = new LinkedHashMap<>();
        List<String> readable = new ArrayList<>();
        if (wanted != null) {
            // Known attribute names (Yammer gauges and meters): getAttributes leaves out the ones a
            // bean does not have, so one call per bean is enough.
            readable.addAll(java.util.Arrays.asList(wanted));
        } else {
            try {
                for (MBeanAttributeInfo info : server.getMBeanInfo(name).getAttributes())
                    if (info.isReadable()) readable.add(info.getName());
            } catch (javax.management.InstanceNotFoundException e) {
                errors.put("*", "unregistered while being read");
            }
        }
        boolean first = true;
        if (!readable.isEmpty()) {
            try {
                List<Attribute> values = server.getAttributes(name, readable.toArray(new String[0])).asList();
                Set<String> got = new TreeSet<>();
                for (Attribute attribute : values) {
                    got.add(attribute.getName());
                    if (!first) out.append(',');
                    first = false;
                    out.append(json(attribute.getName())).append(':');
                    writeValue(out, attribute.getValue(), 0);
                }
                if (wanted == null) {
                    for (String attribute : readable)
                        if (!got.contains(attribute)) errors.put(attribute, "not readable");
                }
            } catch (javax.management.InstanceNotFoundException e) {
                errors.put("*", "unregistered while being read");
            }
        }
        out.append("},\"errors\":{");
        first = true;
        for (Map.Entry<String, String> error : errors.entrySet()) {
            if (!first) out.append(',');
            first = false;
            out.append(json(error.getKey())).append(':').append(json(error.getValue()));
        }
        out.append("}}");
    }

    static void writeValue(StringBuilder out, Object value, int depth) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof Double || value instanceof Float) {
            double d = ((Number) value).doubleValue();
            out.append(Double.isFinite(d) ? Double.toString(d) : "null");
        } else if (value instanceof Number) {
            out.append(value);
        } else if (value instanceof Boolean) {
            out.append(value);
        } else if (value instanceof CompositeData && depth == 0) {
            CompositeData data = (CompositeData) value;
            out.append('{');
            boolean first = true;
            for (String key : new TreeSet<>(data.getCompositeType().keySet())) {
                if (!first) out.append(',');
                first = false;
                out.append(json(key)).append(':');
                writeValue(out, data.get(key), depth + 1);
            }
            out.append('}');
        } else if (value instanceof TabularData || value.getClass().isArray() || value instanceof Collection) {
            out.append(json("<" + value.getClass().getSimpleName() + ">"));
        } else {
            out.append(json(value.toString()));
        }
    }

    static void writeSystemProperties(StringBuilder out, MBeanServerConnection server, List<String> wanted)
            throws Exception {
        out.append('{');
        if (!wanted.isEmpty()) {
            Object table = server.getAttribute(new ObjectName(ManagementFactory.RUNTIME_MXBEAN_NAME), "SystemProperties");
            boolean first = true;
            if (table instanceof TabularData) {
                for (Object row : ((TabularData) table).values()) {
                    CompositeData entry = (CompositeData) row;
                    String key = String.valueOf(entry.get("key"));
                    if (!wanted.contains(key)) continue;
                    if (!first) out.append(',');
                    first = false;
                    out.append(json(key)).append(':').append(json(String.valueOf(entry.get("value"))));
                }
            }
        }
        out.append('}');
    }

    static void writeThreads(StringBuilder out, MBeanServerConnection server, List<String> prefixes) throws Exception {
        out.append('[');
        if (!prefixes.isEmpty()) {
            // Straight calls rather than an MXBean proxy (building one costs ~100 ms in a cold JVM):
            // the AllThreadIds attribute, then the read-only getThreadInfo(long[], int) query.
            ObjectName threading = new ObjectName(ManagementFactory.THREAD_MXBEAN_NAME);
            long[] ids = (long[]) server.getAttribute(threading, "AllThreadIds");
            Object[] infos = (Object[]) server.invoke(threading, "getThreadInfo",
                    new Object[] {ids, 0}, new String[] {long[].class.getName(), int.class.getName()});
            boolean first = true;
            for (Object item : infos) {
                if (!(item instanceof CompositeData)) continue;
                CompositeData info = (CompositeData) item;
                String name = String.valueOf(info.get("threadName"));
                for (String prefix : prefixes) {
                    if (name.startsWith(prefix)) {
                        if (!first) out.append(',');
                        first = false;
                        out.append("{\"name\":").append(json(name))
                                .append(",\"state\":").append(json(String.valueOf(info.get("threadState")))).append('}');
                        break;
                    }
                }
            }
        }
        out.append(']');
    }

    static void writeVm(StringBuilder out, MBeanServerConnection server) throws Exception {
        String[] names = {"Name", "VmName", "VmVersion", "StartTime", "Uptime"};
        String[] keys = {"name", "vm_name", "vm_version", "start_time_ms", "uptime_ms"};
        Map<String, Object> values = new HashMap<>();
        for (Attribute attribute : server.getAttributes(new ObjectName(ManagementFactory.RUNTIME_MXBEAN_NAME), names).asList())
            values.put(attribute.getName(), attribute.getValue());
        out.append('{');
        for (int i = 0; i < names.length; i++) {
            if (i > 0) out.append(',');
            out.append(json(keys[i])).append(':');
            writeValue(out, values.get(names[i]), 1);
        }
        out.append('}');
    }

    static boolean rootIsIo(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) if (t instanceof IOException) return true;
        return false;
    }

    static String describe(Throwable e) {
        StringBuilder text = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (text.length() > 0) text.append(": ");
            text.append(t.getClass().getName());
            if (t.getMessage() != null) text.append(" (").append(t.getMessage().split("\n")[0]).append(')');
            if (t.getCause() == t) break;
        }
        return text.toString();
    }

    static void fail(int code, String kind, String message, Throwable cause) {
        StringBuilder out = new StringBuilder("{\"error\":{\"kind\":").append(json(kind))
                .append(",\"message\":").append(json(message));
        Throwable root = cause;
        while (root != null && root.getCause() != null && root.getCause() != root) root = root.getCause();
        if (root != null) out.append(",\"root\":").append(json(root.getClass().getName()));
        System.out.println(out.append("}}"));
        System.out.flush();
        System.exit(code);
    }

    static String json(String text) {
        StringBuilder out = new StringBuilder(text.length() + 2).append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                default:
                    if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
                    else out.append(c);
            }
        }
        return out.append('"').toString();
    }
}
