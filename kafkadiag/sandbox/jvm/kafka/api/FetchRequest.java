package kafka.api;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import kafka.common.TopicAndPartition;

/** A consumer fetch request (replica id -1) with its offsets per partition. It is framed as Fetch
 *  version 4, the oldest version that carries record batches (message format v2): 0.8.2 spoke
 *  version 0 with message sets, which today's brokers no longer serve. */
public final class FetchRequest {
    public static final short API_KEY = 1;
    public static final short VERSION = 4;

    public final int correlationId;
    public final String clientId;
    public final int maxWaitMs;
    public final int minBytes;
    public final int fetchSize;
    public final Map<TopicAndPartition, Long> offsets;

    public FetchRequest(int correlationId, String clientId, int maxWaitMs, int minBytes, int fetchSize,
                        Map<TopicAndPartition, Long> offsets) {
        this.correlationId = correlationId;
        this.clientId = clientId;
        this.maxWaitMs = maxWaitMs;
        this.minBytes = minBytes;
        this.fetchSize = fetchSize;
        this.offsets = offsets;
    }

    public byte[] serialize() throws IOException {
        Map<String, Map<Integer, Long>> byTopic = new LinkedHashMap<>();
        for (Map.Entry<TopicAndPartition, Long> e : offsets.entrySet())
            byTopic.computeIfAbsent(e.getKey().topic(), t -> new LinkedHashMap<>()).put(e.getKey().partition(), e.getValue());
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeShort(API_KEY);
        out.writeShort(VERSION);
        out.writeInt(correlationId);
        writeString(out, clientId);
        out.writeInt(-1); // replica id: a consumer
        out.writeInt(maxWaitMs);
        out.writeInt(minBytes);
        out.writeInt(fetchSize * Math.max(1, offsets.size())); // response max bytes
        out.writeByte(0); // isolation level: read uncommitted
        out.writeInt(byTopic.size());
        for (Map.Entry<String, Map<Integer, Long>> topic : byTopic.entrySet()) {
            writeString(out, topic.getKey());
            out.writeInt(topic.getValue().size());
            for (Map.Entry<Integer, Long> partition : topic.getValue().entrySet()) {
                out.writeInt(partition.getKey());
                out.writeLong(partition.getValue());
                out.writeInt(fetchSize);
            }
        }
        out.flush();
        return bytes.toByteArray();
    }

    static void writeString(DataOutputStream out, String value) throws IOException {
        byte[] encoded = value.getBytes(StandardCharsets.UTF_8);
        out.writeShort(encoded.length);
        out.write(encoded);
    }
}
