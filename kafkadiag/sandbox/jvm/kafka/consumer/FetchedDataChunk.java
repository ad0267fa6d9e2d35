package kafka.consumer;

import java.util.List;

/** One fetch response's records for one partition, as they travel through a stream's queue. */
public record FetchedDataChunk(List<Long> messageOffsets, int bytes, PartitionTopicInfo topicInfo, long fetchOffset) {}
