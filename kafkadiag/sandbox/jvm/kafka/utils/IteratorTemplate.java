package kafka.utils;

import java.util.Iterator;
import java.util.NoSuchElementException;

/** Kafka 0.8.2's IteratorTemplate: hasNext() -> maybeComputeNext() -> makeNext(), which is
 *  why a starving stream thread shows exactly that frame sequence under LinkedBlockingQueue.take. */
public abstract class IteratorTemplate<T> implements Iterator<T> {
    private enum State { DONE, READY, NOT_READY, FAILED }

    private State state = State.NOT_READY;
    private T nextItem;

    @Override
    public T next() {
        if (!hasNext()) throw new NoSuchElementException();
        state = State.NOT_READY;
        return nextItem;
    }

    @Override
    public boolean hasNext() {
        switch (state) {
            case FAILED: throw new IllegalStateException("Iterator is in failed state");
            case DONE: return false;
            case READY: return true;
            default: return maybeComputeNext();
        }
    }

    protected abstract T makeNext();

    boolean maybeComputeNext() {
        state = State.FAILED;
        nextItem = makeNext();
        if (state == State.DONE) return false;
        state = State.READY;
        return true;
    }

    protected T allDone() {
        state = State.DONE;
        return null;
    }
}
