package kafka.utils;

/** Kafka 0.8.2's ShutdownableThread: run() calls doWork() until shutdown, which is why every Kafka
 *  background thread's stack ends in ShutdownableThread.run -> doWork. */
public abstract class ShutdownableThread extends Thread {
    protected volatile boolean isRunning = true;

    protected ShutdownableThread(String name) {
        super(name);
    }

    public abstract void doWork() throws InterruptedException;

    @Override
    public void run() {
        try {
            while (isRunning) doWork();
        } catch (InterruptedException e) {
            // shutdown() interrupts
        }
    }

    public void shutdown() {
        isRunning = false;
        interrupt();
    }
}
