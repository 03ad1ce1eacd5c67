package metrics

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// TestStateRoundTripAndMerge: split a run's observations into parts, take
// each part's state through JSON, merge: the result equals observing every
// record in one Summary, report included.
func TestStateRoundTripAndMerge(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 7))
		var whole Summary
		parts := make([]Summary, 1+r.IntN(6))
		for i := range 2000 {
			o := randomObservation(r, int64(i+1))
			whole.Observe(o)
			parts[r.IntN(len(parts))].Observe(o)
		}
		var merged Summary
		for i := range parts {
			b, err := parts[i].MarshalState()
			if err != nil {
				t.Fatal(err)
			}
			var back Summary
			if err := back.UnmarshalState(b); err != nil {
				t.Fatalf("seed %d: %v\n%s", seed, err, b)
			}
			if !back.Equal(&parts[i]) {
				t.Fatalf("seed %d part %d: the state did not round-trip", seed, i)
			}
			merged.Merge(&back)
		}
		if !merged.Equal(&whole) {
			t.Fatalf("seed %d: merged states differ from the whole", seed)
		}
		if reportJSON(t, &merged, RunInfo{}) != reportJSON(t, &whole, RunInfo{}) {
			t.Fatalf("seed %d: reports differ", seed)
		}
	}
}

// TestStateCoversEveryCounter sets every field of a Summary's counters
// (and of a group's counts) to a distinct value and checks that the state
// carries it back: a counter added without its place in the state fails
// here.
func TestStateCoversEveryCounter(t *testing.T) {
	var s Summary
	next := int64(1)
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		v = reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem() // settable, unexported or not
		switch v.Kind() {
		case reflect.Int64:
			v.SetInt(next)
		case reflect.Uint64:
			v.SetUint(uint64(next))
		case reflect.Array:
			for i := range v.Len() {
				fill(v.Index(i))
			}
			return
		case reflect.Struct:
			for i := range v.NumField() {
				fill(v.Field(i))
			}
			return
		default:
			t.Fatalf("a counter of kind %s: teach MarshalState and this test about it", v.Kind())
		}
		next++
	}
	fill(reflect.ValueOf(&s.c).Elem())
	s.c.reasons = [len(s.c.reasons)]int64{} // reasons: only those that exist have names; filled below
	for i := range s.c.reasons {
		s.c.reasons[i] = int64(100 + i)
	}
	fill(reflect.ValueOf(&s.q.qcounters).Elem())
	s.q.redactions = map[string]int64{"aws_access_key": 3, "jwt": 1}
	var g GroupCounts
	fill(reflect.ValueOf(&g).Elem())
	s.groups.Add("a", &g)
	s.groups.Other = g
	s.before.Add(7)
	s.after.Add(70000)
	b, err := s.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := back.UnmarshalState(b); err != nil {
		t.Fatal(err)
	}
	if !back.Equal(&s) {
		t.Fatalf("state lost a counter:\nwant %+v %+v\ngot  %+v %+v\n%s", s.c, s.q, back.c, back.q, b)
	}
}

func TestStateRefusesWhatItCannotRead(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"version":2}`, "version 2"},
		{`{"version":1,"outcomes":{"exploded":1}}`, `outcome "exploded"`},
		{`{"version":1,"outcomes":{"compressed":-1}}`, `outcome "compressed": -1`},
		{`{"version":1,"reasons":{"why":1}}`, `reason "why"`},
		{`{"version":1,"before":{"count":2,"max":3,"bins":[[3,1]]}}`, "histogram"},
		{`{"version":1,"images":-1}`, "images -1"},
		{`not json`, "metrics: state"},
	} {
		var s Summary
		if err := s.UnmarshalState([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}
