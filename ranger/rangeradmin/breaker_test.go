package rangeradmin

import (
	"testing"
	"time"
)

func TestBreakerBackoff(t *testing.T) {
	now := time.Unix(1000, 0)
	b := breaker{threshold: 3, maxBackoff: 5 * time.Minute}
	poll := 10 * time.Second
	var waits []time.Duration
	for i := 0; i < 12; i++ {
		b.fail(now, poll)
		if b.state(now) == BreakerClosed {
			waits = append(waits, 0)
			continue
		}
		waits = append(waits, b.openUntil.Sub(now))
	}
	want := []time.Duration{0, 0, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 5 * time.Minute, 5 * time.Minute}
	for i, w := range want {
		if waits[i] != w {
			t.Errorf("after %d failures: wait %s, want %s", i+1, waits[i], w)
		}
	}
	if b.state(now.Add(6*time.Minute)) != BreakerHalfOpen {
		t.Error("after the backoff the breaker is half-open")
	}
	b.succeed()
	if b.state(now) != BreakerClosed || b.failures != 0 {
		t.Error("a success closes the breaker")
	}
	// Huge intervals do not overflow.
	b = breaker{threshold: 1, maxBackoff: time.Duration(1<<31) * time.Second}
	for i := 0; i < 100; i++ {
		b.fail(now, time.Hour)
	}
	if d := b.openUntil.Sub(now); d <= 0 || d > b.maxBackoff {
		t.Errorf("backoff %s", d)
	}
}
