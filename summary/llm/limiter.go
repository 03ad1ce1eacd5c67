package llm

import (
	"context"
	"sync"
	"time"
)

// bucket is a token-bucket limiter refilled at perMinute/60 per second,
// holding at most perMinute. It is safe for concurrent use. A nil *bucket
// never waits.
type bucket struct {
	mu        sync.Mutex
	perMinute float64
	tokens    float64
	last      time.Time
	now       func() time.Time
}

func newBucket(perMinute int) *bucket {
	if perMinute <= 0 {
		return nil
	}
	b := &bucket{perMinute: float64(perMinute), tokens: float64(perMinute), now: time.Now}
	b.last = b.now()
	return b
}

// reserve takes n tokens (at most the bucket size) and returns how long the
// caller must wait before using them. Reservations queue in call order:
// the balance may go negative.
func (b *bucket) reserve(n int) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	rate := b.perMinute / 60 // per second
	b.tokens += now.Sub(b.last).Seconds() * rate
	if b.tokens > b.perMinute {
		b.tokens = b.perMinute
	}
	b.last = now
	need := min(float64(n), b.perMinute)
	b.tokens -= need
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens / rate * float64(time.Second))
}

// cancel gives back n tokens of a reservation that was not used.
func (b *bucket) cancel(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tokens = min(b.tokens+min(float64(n), b.perMinute), b.perMinute)
}

// wait takes n tokens, sleeping until they are available or ctx is done.
func (b *bucket) wait(ctx context.Context, n int) error {
	if b == nil {
		return nil
	}
	d := b.reserve(n)
	if d <= 0 {
		return nil
	}
	if err := sleep(ctx, d); err != nil {
		b.cancel(n)
		return err
	}
	return nil
}
