package com.example.retry;

import java.time.Duration;
import java.util.Objects;

/**
 * How many times an operation is retried and how long to wait between attempts.
 */
public final class RetryPolicy {
    private final int maxAttempts;
    private final Duration delay;

    /**
     * Creates a policy.
     *
     * @param maxAttempts attempts in all, the first one included
     * @param delay the wait between two attempts
     */
    public RetryPolicy(int maxAttempts, Duration delay) {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1");
        }
        this.maxAttempts = maxAttempts;
        this.delay = Objects.requireNonNull(delay, "delay");
    }

    /** Whether another attempt may follow attempt {@code attempt} (1-based). */
    public boolean allowsRetry(int attempt) {
        return attempt < maxAttempts;
    }

    /** The wait before the next attempt. */
    public Duration delay() {
        return delay;
    }
}
