package llm

import (
	"context"
	"time"

	"golang.org/x/time/rate"
)

// perMinute is a requests- or tokens-per-minute limit: a token bucket
// (golang.org/x/time/rate) refilled at n/60 per second and holding at most
// n, so a burst of a full minute's allowance goes out at once. A nil
// *perMinute never waits.
type perMinute struct {
	lim *rate.Limiter
	n   int
	now func() time.Time
}

func newPerMinute(n int) *perMinute {
	if n <= 0 {
		return nil
	}
	return &perMinute{lim: rate.NewLimiter(rate.Limit(float64(n)/60), n), n: n, now: time.Now}
}

// reserve takes n tokens (at most the bucket size, so an oversized request
// waits for one full bucket instead of forever) and returns the
// reservation. Reservations queue in call order.
func (p *perMinute) reserve(n int) *rate.Reservation {
	return p.lim.ReserveN(p.now(), min(n, p.n))
}

// wait takes n tokens, sleeping until they are available or ctx is done;
// a wait cut short by ctx gives its tokens back.
func (p *perMinute) wait(ctx context.Context, n int) error {
	if p == nil {
		return nil
	}
	r := p.reserve(n)
	d := r.DelayFrom(p.now())
	if d <= 0 {
		return nil
	}
	if err := sleep(ctx, d); err != nil {
		r.CancelAt(p.now())
		return err
	}
	return nil
}
