package com.example.orders;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * The payment provider the payments handler calls for every record. While it answers, approval is
 * immediate (there is no real provider to call). Once it stops answering, a call connects to a
 * server socket that is bound but never accepts: the kernel completes the connection from its
 * backlog, the request is written, and the read of the reply never returns. The caller is then
 * RUNNABLE in a socket read with no timeout, which is how a hung downstream call looks in a real
 * dump, and no gateway thread of ours shows beside it.
 */
final class PaymentGateway {
    private final ServerSocket unanswered;
    private volatile boolean answering = true;

    PaymentGateway() throws IOException {
        unanswered = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    }

    void stopAnswering() {
        answering = false;
    }

    void authorize(byte[] payment) throws IOException {
        if (answering) {
            return;
        }
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), unanswered.getLocalPort())) {
            socket.getOutputStream().write(payment);
            InputStream reply = socket.getInputStream();
            if (reply.read() < 0) {
                throw new IOException("the payment gateway closed the connection");
            }
        }
    }
}
