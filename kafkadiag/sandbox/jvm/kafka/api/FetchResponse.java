package kafka.api;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import kafka.common.TopicAndPartition;

/** The answer to {@link FetchRequest}: per partition its error code, high watermark and the
 *  offsets of the records it carries at or after the requested offset. Only complete record
 *  batches count (the broker may cut the last one at the size limit). */
public final class FetchResponse {
    public static final class PartitionData {
        public final short error;
        public final long highWatermark;
        public final List<Long> messageOffsets;
        public final int bytes;

        PartitionData(short error, long highWatermark, List<Long> messageOffsets, int bytes) {
            this.error = error;
            this.highWatermark = highWatermark;
            this.messageOffsets = messageOffsets;
            this.bytes = bytes;
        }
    }

    public final Map<TopicAndPartition, PartitionData> data = new LinkedHashMap<>();

    public static FetchResponse parse(byte[] frame, Map<TopicAndPartition, Long> requested) {
        ByteBuffer in = ByteBuffer.wrap(frame);
        FetchResponse response = new FetchResponse();
        in.getInt(); // correlation id
        in.getInt(); // throttle time
        int topics = in.getInt();
        for (int t = 0; t < topics; t++) {
            String topic = readString(in);
            int partitions = in.getInt();
            for (int p = 0; p < partitions; p++) {
                int partition = in.getInt();
                short error = in.getShort();
                long highWatermark = in.getLong();
                in.getLong(); // last stable offset
                int aborted = in.getInt();
                for (int a = 0; a < aborted; a++) {
                    in.getLong();
                    in.getLong();
                }
                int size = in.getInt();
                TopicAndPartition tp = new TopicAndPartition(topic, partition);
                long from = requested.getOrDefault(tp, 0L);
                List<Long> offsets = new ArrayList<>();
                if (size > 0) {
                    ByteBuffer records = in.slice();
                    records.limit(size);
                    readBatches(records, from, offsets);
                    in.position(in.position() + size);
                }
                response.data.put(tp, new PartitionData(error, highWatermark, offsets, Math.max(size, 0)));
            }
        }
        return response;
    }

    /** Record batch v2 header: baseOffset int64, batchLength int32, then partitionLeaderEpoch int32,
     *  magic int8, crc int32, attributes int16, lastOffsetDelta int32, ... */
    private static void readBatches(ByteBuffer records, long from, List<Long> offsets) {
        while (records.remaining() >= 12 + 4 + 1 + 4 + 2 + 4) {
            int start = records.position();
            long baseOffset = records.getLong();
            int batchLength = records.getInt();
            if (batchLength < 0 || records.remaining() < batchLength) break; // cut at the size limit
            records.getInt(); // partition leader epoch
            byte magic = records.get();
            records.getInt(); // crc
            records.getShort(); // attributes
            int lastOffsetDelta = magic >= 2 ? records.getInt() : 0;
            for (long offset = baseOffset; offset <= baseOffset + lastOffsetDelta; offset++)
                if (offset >= from) offsets.add(offset);
            records.position(start + 12 + batchLength);
        }
    }

    private static String readString(ByteBuffer in) {
        short length = in.getShort();
        byte[] bytes = new byte[length];
        in.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
