package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"

	"github.com/trajcompress/trajcompress/internal/crash"
	"github.com/trajcompress/trajcompress/metrics"
	"github.com/trajcompress/trajcompress/summary"
	"github.com/trajcompress/trajcompress/traj"
)

// Source yields input records: the raw bytes of one record and its 1-based
// line (or row) number, then io.EOF. The returned bytes are owned by the
// caller. Every format.Reader is a Source.
type Source interface {
	Next() ([]byte, int64, error)
}

// TooLarge is a per-record error a Source's Next may return with the
// record's line (the bytes nil) for a record longer than the reader takes
// (format/jsonl's TooLargeError): [Run] rejects that record as
// record_too_large, with its size, and goes on. Any other error from Next
// ends the run.
type TooLarge interface {
	error
	RecordTooLarge() (size, limit int64)
}

// RejectTooLarge is the reason of a record rejected as longer than the
// reader takes.
const RejectTooLarge = "record_too_large"

// tooLarge is the result of a record the source did not read, being
// longer than it takes: rejected with its size, no bytes kept (in a run
// grouped by a field, in the group of records without it).
func (c *Compressor) tooLarge(pos traj.Pos, e TooLarge) Result {
	size, limit := e.RecordTooLarge()
	var res Result
	res.Obs.Source, res.Obs.Line, res.Obs.Record = pos.File, pos.Line, pos.Record
	res.Obs.Reject(RejectTooLarge)
	if c.opts.GroupBy != "" {
		res.Obs.Group = metrics.GroupName(nil, false)
	}
	res.Reject = &Reject{Pos: pos, Reason: RejectTooLarge,
		Detail: fmt.Sprintf("the record is %d bytes, over the limit of %d (--max-record-bytes): it was not read, and no bytes of it are kept here", size, limit)}
	return res
}

// Unfit is a per-record error a Sink's Write may return for a record the
// output cannot hold and did not write (a Parquet or Arrow row that does
// not fit the file's schema: format/parquet's and format/arrow's
// RowError): [Run] rejects that record as output_schema, the error as its
// detail and its input line as read as its raw, and goes on. Any other
// error from Write ends the run.
type Unfit interface {
	error
	RecordUnfit()
}

// RejectOutputSchema is the reason of a record the output did not take
// (an [Unfit] error from the Sink).
const RejectOutputSchema = "output_schema"

// unfit turns the result of a record the sink did not take into its
// rejection: counted as rejected (the observation keeps only where the
// record came from and its group), its input line in the rejects.
func unfit(res Result, raw []byte, err error) Result {
	o := res.Obs
	obs := metrics.Observation{Source: o.Source, Line: o.Line, Record: o.Record, Group: o.Group}
	obs.Reject(RejectOutputSchema)
	pos := traj.Pos{File: o.Source, Line: o.Line, Record: o.Record}
	return Result{Obs: obs, Reject: &Reject{Pos: pos, Reason: RejectOutputSchema, Raw: raw,
		Detail: fmt.Sprintf("the record as it would be written does not fit the output's schema, so it was not written: %v", err)}}
}

// Indexed is a Source that also gives the 1-based index in its file of
// the record Next returned last, when the line does not name the record
// alone (a JSON array), and 0 otherwise; [Run] puts it in traj.Pos.Record.
// A format.Input is one.
type Indexed interface {
	Source
	Record() int64
}

// Sink receives output records in input order. Run only writes; putting
// the output in place (or discarding it) is the caller's, after Run
// returns. Every format.Writer is a Sink.
type Sink interface {
	Write(rec []byte) error
}

// Config configures [Run].
type Config struct {
	// Workers bounds how many records do CPU work at once (tokenizing,
	// planning, assembling). 0 means GOMAXPROCS.
	Workers int
	// InFlight bounds how many records may be between reader and writer at
	// once, and InFlightBytes how many bytes of input they may hold: memory
	// is proportional to the smaller. A window of several records per worker
	// keeps the workers busy while a large record holds the head of the
	// ordered output; the byte bound keeps a run of huge records from
	// multiplying memory. 0 means 32×Workers+2 records and 64 MiB (see
	// bench/README.md); a record larger than InFlightBytes is admitted alone.
	InFlight      int
	InFlightBytes int64
	// Network bounds the requests a remote summarizer has in flight at once
	// (processing.max_concurrent_requests); 0 means 50, the peer's default.
	// With a remote summarizer the default InFlight widens to
	// max(256, Workers+8×Network): records waiting out a retry hold their
	// place in the ordered output, and a wide window keeps the other
	// requests flowing meanwhile.
	Network int
	// OnResult, when set, is called for every record in input order from
	// the single writer goroutine, after the record was written: it may
	// write rejects and outcome lines and update progress without locking.
	OnResult func(Result) error
}

// DefaultNetwork is the default [Config.Network]: the peer's
// max_concurrent_requests.
const DefaultNetwork = 50

func (c Config) withDefaults(remote bool) Config {
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.Network <= 0 {
		c.Network = DefaultNetwork
	}
	if c.InFlight <= 0 {
		c.InFlight = 32*c.Workers + 2
		if remote {
			c.InFlight = max(256, c.Workers+8*c.Network)
		}
	}
	if c.InFlightBytes <= 0 {
		c.InFlightBytes = 64 << 20
	}
	return c
}

// Run streams every record of src through c into dst (dst may be nil: a dry
// run) in input order, and returns the metrics of this source. Records are
// read by one reader goroutine, compressed by up to cfg.Workers goroutines
// at a time, and written by one writer goroutine, so output is
// byte-identical whatever the number of workers. Run returns when all of
// them have.
//
// The error is non-nil only when the run must stop: a read or write error,
// a fatal summarizer error, or ctx cancelled. Per-record problems are
// outcomes in the metrics, never errors. On error the caller must Abort dst.
func Run(ctx context.Context, name string, src Source, dst Sink, c *Compressor, cfg Config) (*metrics.Summary, error) {
	remote := c.opts.Summarizing.Summarizer.Remote() && !c.opts.DryRun
	cfg = cfg.withDefaults(remote)
	lim := limits{cpu: semaphore.NewWeighted(int64(cfg.Workers))}
	if remote {
		lim.net = semaphore.NewWeighted(int64(cfg.Network))
	}
	sum := &metrics.Summary{}

	g, gctx := errgroup.WithContext(ctx)
	// Ordered fan-out (restic's dump): each record gets a one-slot channel,
	// queued in input order; the writer drains them in that order. The
	// queue's capacity bounds the records in flight.
	f := fanOut{queue: make(chan slot, cfg.InFlight), budget: semaphore.NewWeighted(cfg.InFlightBytes), max: cfg.InFlightBytes}
	g.Go(func() (err error) {
		defer crash.Recover(&err)
		return f.feed(gctx, g, name, src, c, lim)
	})
	g.Go(func() (err error) {
		defer crash.Recover(&err)
		return f.drain(gctx, dst, sum, cfg.OnResult)
	})
	if err := g.Wait(); err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return sum, context.Cause(ctx)
		}
		return sum, err
	}
	return sum, nil
}

// slot is a record's place in the queue of a fan-out: the channel its
// result comes on, and the bytes it holds against the budget.
type slot struct {
	ch     chan Result
	weight int64
	raw    []byte // the input line, for a record the sink does not take
}

// fanOut is the queue of a Run's records in input order, and the budget
// of the bytes they hold (max: a record's weight at most).
type fanOut struct {
	queue  chan slot
	budget *semaphore.Weighted
	max    int64
}

// feed reads the records of src, queues a slot for each in order and
// starts its compression in g.
func (f fanOut) feed(gctx context.Context, g *errgroup.Group, name string, src Source, c *Compressor, lim limits) error {
	defer close(f.queue)
	for {
		raw, line, err := src.Next()
		if err == io.EOF {
			return nil
		}
		var big TooLarge
		if err != nil && !errors.As(err, &big) {
			return err
		}
		s := slot{ch: make(chan Result, 1), weight: min(int64(len(raw)), f.max), raw: raw}
		if err := f.budget.Acquire(gctx, s.weight); err != nil {
			return context.Cause(gctx)
		}
		select {
		case f.queue <- s:
		case <-gctx.Done():
			return context.Cause(gctx)
		}
		pos := traj.Pos{File: name, Line: line}
		if ix, ok := src.(Indexed); ok {
			pos.Record = ix.Record()
		}
		if big != nil {
			s.ch <- c.tooLarge(pos, big)
			continue
		}
		g.Go(func() (err error) {
			defer crash.Recover(&err)
			res, err := c.compress(gctx, raw, pos, lim)
			if err != nil {
				return err
			}
			s.ch <- res
			return nil
		})
	}
}

// drain takes the results in input order: each record's output to dst,
// its observation to sum, the result to onResult.
func (f fanOut) drain(gctx context.Context, dst Sink, sum *metrics.Summary, onResult func(Result) error) error {
	for s := range f.queue {
		var res Result
		select {
		case res = <-s.ch:
		case <-gctx.Done():
			return context.Cause(gctx)
		}
		f.budget.Release(s.weight)
		if dst != nil && res.Out != nil {
			if err := dst.Write(res.Out); err != nil {
				var u Unfit
				if !errors.As(err, &u) {
					return fmt.Errorf("writing output: %w", err)
				}
				res = unfit(res, s.raw, err)
			}
		}
		sum.Observe(res.Obs)
		if onResult != nil {
			if err := onResult(res); err != nil {
				return err
			}
		}
	}
	return nil
}

// limits are the bounds [Run] puts on the work of its records: cpu on the
// records doing CPU work at once (Config.Workers), net on the requests a
// remote summarizer has in flight (Config.Network). A nil semaphore
// bounds nothing.
type limits struct {
	cpu, net *semaphore.Weighted
}

// network is net as a summary.Slots: nil (no bound) when net is nil, never
// an interface holding a nil pointer.
func (l limits) network() summary.Slots {
	if l.net == nil {
		return nil
	}
	return l.net
}

func (l limits) acquireCPU(ctx context.Context) error {
	if l.cpu == nil {
		return nil
	}
	return l.cpu.Acquire(ctx, 1)
}

func (l limits) releaseCPU() {
	if l.cpu != nil {
		l.cpu.Release(1)
	}
}
