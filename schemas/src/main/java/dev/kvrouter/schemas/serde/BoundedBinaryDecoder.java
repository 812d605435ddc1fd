package dev.kvrouter.schemas.serde;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.avro.AvroRuntimeException;
import org.apache.avro.io.Decoder;
import org.apache.avro.util.Utf8;

/**
 * Avro's binary encoding read from one record's bytes, refusing any size the bytes cannot hold
 * before anything of that size is reserved. Avro's own decoder reserves an array of the declared
 * count (up to 2^31 - 9 items) and a string of the declared length before it reads them, so a record
 * of a few bytes could make the reader allocate gigabytes; the topics the job reads are written by
 * every balancer, and one bad record must go to the dead-letter topic, not crash-loop the job.
 *
 * <p>The bound is the bytes left: a string or bytes value is never longer, and a block of a collection
 * never holds more items, since every item of the project's schemas takes at least one byte (no
 * array or map of {@code null} or of an empty record). A size past it is an {@link AvroRuntimeException}
 * saying what was declared and how many bytes were left. It needs no JVM property set on the
 * TaskManagers (Avro's {@code org.apache.avro.limits.*} bound only absolute sizes).
 */
public final class BoundedBinaryDecoder extends Decoder {

    private final byte[] buf;
    private int pos;
    private final int limit;

    public BoundedBinaryDecoder(byte[] data, int offset, int length) {
        if (offset < 0 || length < 0 || offset + length > data.length) {
            throw new IllegalArgumentException("offset " + offset + " and length " + length + " outside " + data.length + " byte(s)");
        }
        this.buf = data;
        this.pos = offset;
        this.limit = offset + length;
    }

    private int left() {
        return limit - pos;
    }

    private void need(int bytes) throws EOFException {
        if (bytes > left()) {
            throw new EOFException("the record ends " + (bytes - left()) + " byte(s) short");
        }
    }

    @Override
    public void readNull() {}

    @Override
    public boolean readBoolean() throws IOException {
        need(1);
        int b = buf[pos++];
        if (b != 0 && b != 1) {
            throw new AvroRuntimeException("a boolean is encoded as " + b + ", not 0 or 1");
        }
        return b == 1;
    }

    @Override
    public int readInt() throws IOException {
        long v = readLong();
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw new AvroRuntimeException("an int is encoded as " + v + ", out of int range");
        }
        return (int) v;
    }

    @Override
    public long readLong() throws IOException {
        long z = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            need(1);
            int b = buf[pos++] & 0xff;
            z |= (long) (b & 0x7f) << shift;
            if ((b & 0x80) == 0) {
                return (z >>> 1) ^ -(z & 1);
            }
        }
        throw new AvroRuntimeException("a variable-length long runs past 10 bytes");
    }

    @Override
    public float readFloat() throws IOException {
        need(4);
        int bits = (buf[pos] & 0xff) | (buf[pos + 1] & 0xff) << 8 | (buf[pos + 2] & 0xff) << 16 | (buf[pos + 3] & 0xff) << 24;
        pos += 4;
        return Float.intBitsToFloat(bits);
    }

    @Override
    public double readDouble() throws IOException {
        need(8);
        long bits = 0;
        for (int i = 7; i >= 0; i--) {
            bits = bits << 8 | (buf[pos + i] & 0xff);
        }
        pos += 8;
        return Double.longBitsToDouble(bits);
    }

    /** A string's or bytes' declared length, refused past the bytes left. */
    private int length(String what) throws IOException {
        long n = readLong();
        if (n < 0 || n > left()) {
            throw new AvroRuntimeException("the record declares " + what + " of " + n + " byte(s), with " + left() + " byte(s) left");
        }
        return (int) n;
    }

    @Override
    public Utf8 readString(Utf8 old) throws IOException {
        int n = length("a string");
        Utf8 s = old != null ? old : new Utf8();
        s.setByteLength(n);
        System.arraycopy(buf, pos, s.getBytes(), 0, n);
        pos += n;
        return s;
    }

    @Override
    public String readString() throws IOException {
        int n = length("a string");
        String s = new String(buf, pos, n, StandardCharsets.UTF_8);
        pos += n;
        return s;
    }

    @Override
    public void skipString() throws IOException {
        pos += length("a string");
    }

    @Override
    public ByteBuffer readBytes(ByteBuffer old) throws IOException {
        int n = length("bytes");
        ByteBuffer b = old != null && old.capacity() >= n ? old.clear() : ByteBuffer.allocate(n);
        b.put(buf, pos, n).flip();
        pos += n;
        return b;
    }

    @Override
    public void skipBytes() throws IOException {
        pos += length("bytes");
    }

    @Override
    public void readFixed(byte[] bytes, int start, int length) throws IOException {
        need(length);
        System.arraycopy(buf, pos, bytes, start, length);
        pos += length;
    }

    @Override
    public void skipFixed(int length) throws IOException {
        need(length);
        pos += length;
    }

    @Override
    public int readEnum() throws IOException {
        return readInt();
    }

    @Override
    public int readIndex() throws IOException {
        return readInt();
    }

    /**
     * One block's item count: a negative count is followed by the block's size in bytes (which a
     * reader may use to skip it). Refused when more items are declared than bytes are left.
     */
    private long block(String what) throws IOException {
        long n = readLong();
        if (n < 0) {
            n = -n;
            readLong(); // the block's byte size
        }
        if (n < 0 || n > left()) {
            throw new AvroRuntimeException("the record declares " + n + " item(s) in a block of " + what + ", with " + left() + " byte(s) left");
        }
        return n;
    }

    @Override
    public long readArrayStart() throws IOException {
        return block("an array");
    }

    @Override
    public long arrayNext() throws IOException {
        return block("an array");
    }

    /** Items are skipped one by one by the caller: Avro's contract for skipArray returning a count. */
    @Override
    public long skipArray() throws IOException {
        return block("an array");
    }

    @Override
    public long readMapStart() throws IOException {
        return block("a map");
    }

    @Override
    public long mapNext() throws IOException {
        return block("a map");
    }

    @Override
    public long skipMap() throws IOException {
        return block("a map");
    }
}
