package trajbeam

import (
	"context"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/trajcompress/trajcompress/metrics"
)

// The functions and types a worker must know by name.
func init() {
	for _, t := range []any{Record{}, Unit{}, Span{}, Blocks{}, Rejected{}, Part{}, Source{}, Plan{}} {
		beam.RegisterType(reflect.TypeOf(t))
	}
	beam.RegisterCoder(reflect.TypeOf((*metrics.Summary)(nil)), encodeSummary, decodeSummary)

	register.DoFn3x0[string, string, func(Record)](&textFn{})
	register.DoFn3x1[context.Context, Unit, func(Record), error](&readUnitFn{})
	register.DoFn5x1[context.Context, Record, func([]byte), func(int, Rejected), func(*metrics.Summary), error](&compressFn{})
	register.DoFn3x1[context.Context, []byte, func(Part), error](&writeFn{})
	register.DoFn4x1[context.Context, int, func(*Rejected) bool, func(Part), error](&rejectsFn{})
	register.DoFn6x1[context.Context, []byte, func(**metrics.Summary) bool, func(*Part) bool, func(*Part) bool, func(*Blocks) bool, error](&finalizeFn{})
	register.DoFn3x1[context.Context, Span, func(Blocks), error](&hashFn{})
	register.Combiner1[*metrics.Summary](&summaryFn{})

	register.Emitter1[Record]()
	register.Emitter1[[]byte]()
	register.Emitter2[int, Rejected]()
	register.Emitter1[*metrics.Summary]()
	register.Emitter1[Part]()
	register.Emitter1[Blocks]()
	register.Iter1[Rejected]()
	register.Iter1[*metrics.Summary]()
	register.Iter1[Part]()
	register.Iter1[Blocks]()
}
