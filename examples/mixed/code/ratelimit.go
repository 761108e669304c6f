// Package ratelimit implements a token bucket rate limiter.
package ratelimit

import (
	"sync"
	"time"
)

// A Limiter controls how frequently events are allowed to happen. It implements a token bucket of
// size burst, initially full and refilled at rate tokens per second.
type Limiter struct {
	mu     sync.Mutex
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
}

// NewLimiter returns a new Limiter that allows events up to rate r and permits bursts of at most b tokens.
func NewLimiter(r float64, b int) *Limiter {
	return &Limiter{rate: r, burst: float64(b), tokens: float64(b)}
}

// Allow reports whether an event may happen now, and spends a token if so.
func (l *Limiter) Allow() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if !l.last.IsZero() {
		l.tokens += now.Sub(l.last).Seconds() * l.rate
		if l.tokens > l.burst {
			l.tokens = l.burst
		}
	}
	l.last = now
	if l.tokens < 1 {
		return false
	}
	l.tokens--
	return true
}
