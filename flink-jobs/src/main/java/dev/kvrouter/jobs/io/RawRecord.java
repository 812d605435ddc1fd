package dev.kvrouter.jobs.io;

/** A Kafka record as read, undecoded, with where it came from: what a dead letter needs to keep. */
public class RawRecord {
    public String topic;
    public int partition;
    public long offset;
    public long timestamp;
    public byte[] key;
    public byte[] value;

    public RawRecord() {}

    public RawRecord(String topic, int partition, long offset, long timestamp, byte[] key, byte[] value) {
        this.topic = topic;
        this.partition = partition;
        this.offset = offset;
        this.timestamp = timestamp;
        this.key = key;
        this.value = value;
    }
}
