import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Prints Thread.getAllStackTraces() twice, as applications log it: in alpakka-kafka's layout
 * ("Dumping stacks: " then each thread as "Thread[...]\n " and its frames, one per line) and with
 * "\tat " before each frame, each inside a log record. The threads wait in every way a top frame
 * can show: parked, parked with a timeout, sleeping, in Object.wait, and entering a monitor that
 * main holds (which no frame tells apart from running). One name holds commas and brackets.
 */
public final class AllStackTraces {
    static final Object MONITOR = new Object();
    static final Object WAITED_ON = new Object();

    public static void main(String[] args) throws Exception {
        CountDownLatch never = new CountDownLatch(1);
        LinkedBlockingQueue<String> empty = new LinkedBlockingQueue<>();
        Thread parked = start("worker [orders,2], main", () -> await(never));
        Thread timed = start("timed-taker", () -> poll(empty));
        Thread sleeper = start("sleeper", AllStackTraces::sleep);
        Thread waiter = start("waiter", AllStackTraces::waitOn);
        Thread entering;
        synchronized (MONITOR) {
            entering = start("entering", () -> {
                synchronized (MONITOR) {
                    System.out.println("unreachable while main holds the monitor");
                }
            });
            while (parked.getState() != Thread.State.WAITING || timed.getState() != Thread.State.TIMED_WAITING
                    || sleeper.getState() != Thread.State.TIMED_WAITING || waiter.getState() != Thread.State.WAITING
                    || entering.getState() != Thread.State.BLOCKED) {
                Thread.sleep(10);
            }
            System.out.println("[WARN] [main] Wake up has been triggered. Dumping stacks: " + alpakkaLayout());
            System.out.println("[INFO] [main] polling again");
            System.out.println("[WARN] [main] All thread stacks:" + atLayout());
            System.out.println("[INFO] [main] done");
        }
    }

    static String alpakkaLayout() {
        StringJoiner threads = new StringJoiner("\n\n");
        for (Map.Entry<Thread, StackTraceElement[]> entry : Thread.getAllStackTraces().entrySet()) {
            StringJoiner frames = new StringJoiner("\n");
            for (StackTraceElement frame : entry.getValue()) {
                frames.add(frame.toString());
            }
            threads.add(entry.getKey() + "\n " + frames);
        }
        return threads.toString();
    }

    static String atLayout() {
        StringBuilder text = new StringBuilder();
        for (Map.Entry<Thread, StackTraceElement[]> entry : Thread.getAllStackTraces().entrySet()) {
            text.append('\n').append(entry.getKey());
            for (StackTraceElement frame : entry.getValue()) {
                text.append("\n\tat ").append(frame);
            }
        }
        return text.toString();
    }

    static Thread start(String name, Runnable body) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static void poll(LinkedBlockingQueue<String> queue) {
        try {
            queue.poll(1, TimeUnit.HOURS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static void sleep() {
        try {
            Thread.sleep(3_600_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static void waitOn() {
        synchronized (WAITED_ON) {
            try {
                WAITED_ON.wait();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
