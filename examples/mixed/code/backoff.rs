//! Retry schedules.

use std::time::Duration;

/// An exponential backoff schedule: `initial`, doubled after every attempt, never above `max`.
#[derive(Debug, Clone)]
pub struct Backoff {
    initial: Duration,
    max: Duration,
    attempt: u32,
}

impl Backoff {
    /// A schedule starting at `initial` and capped at `max`.
    pub fn new(initial: Duration, max: Duration) -> Self {
        Backoff { initial, max, attempt: 0 }
    }

    /// The delay before the next attempt; each call moves the schedule one attempt on.
    pub fn next_delay(&mut self) -> Duration {
        let factor = 2u32.saturating_pow(self.attempt);
        self.attempt = self.attempt.saturating_add(1);
        self.initial.saturating_mul(factor).min(self.max)
    }

    /// Starts the schedule over, after a success.
    pub fn reset(&mut self) {
        self.attempt = 0;
    }
}
