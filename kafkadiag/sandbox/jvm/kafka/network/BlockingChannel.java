package kafka.network;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;

/** Kafka 0.8.2's BlockingChannel: one blocking socket to a broker; a request is written with its
 *  4-byte size prefix and the answer read the same way. */
public final class BlockingChannel implements AutoCloseable {
    private final String host;
    private final int port;
    private final int readTimeoutMs;
    private Socket socket;
    private DataInputStream in;
    private DataOutputStream out;

    public BlockingChannel(String host, int port, int readTimeoutMs) {
        this.host = host;
        this.port = port;
        this.readTimeoutMs = readTimeoutMs;
    }

    public void connect() throws IOException {
        if (socket != null) return;
        socket = new Socket();
        socket.setTcpNoDelay(true);
        socket.setSoTimeout(readTimeoutMs);
        socket.connect(new InetSocketAddress(host, port), readTimeoutMs);
        in = new DataInputStream(socket.getInputStream());
        out = new DataOutputStream(socket.getOutputStream());
    }

    public byte[] sendAndReceive(byte[] request) throws IOException {
        connect();
        out.writeInt(request.length);
        out.write(request);
        out.flush();
        int size = in.readInt();
        if (size < 0 || size > 64 * 1024 * 1024) throw new IOException("bad response size " + size);
        byte[] response = new byte[size];
        in.readFully(response);
        return response;
    }

    @Override
    public void close() {
        if (socket == null) return;
        try {
            socket.close();
        } catch (IOException e) {
            // closing anyway
        }
        socket = null;
    }
}
