package kafka.consumer;

import java.io.IOException;
import java.util.Map;
import kafka.api.FetchRequest;
import kafka.api.FetchResponse;
import kafka.common.TopicAndPartition;
import kafka.network.BlockingChannel;

/** Kafka 0.8.2's SimpleConsumer: one blocking channel to one broker; a failed request is retried
 *  once on a new connection. */
public final class SimpleConsumer {
    private final BlockingChannel channel;
    private final String clientId;
    private int correlationId;

    public SimpleConsumer(String host, int port, int socketTimeoutMs, String clientId) {
        this.channel = new BlockingChannel(host, port, socketTimeoutMs);
        this.clientId = clientId;
    }

    public FetchResponse fetch(Map<TopicAndPartition, Long> offsets, int maxWaitMs, int minBytes, int fetchSize)
            throws IOException {
        FetchRequest request = new FetchRequest(++correlationId, clientId, maxWaitMs, minBytes, fetchSize, offsets);
        byte[] frame;
        try {
            frame = channel.sendAndReceive(request.serialize());
        } catch (IOException first) {
            channel.close();
            frame = channel.sendAndReceive(request.serialize());
        }
        return FetchResponse.parse(frame, offsets);
    }

    public void close() {
        channel.close();
    }
}
