package sink

import (
	"context"
	"math"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// TestClaimTemplate: the template writes, for any sequence of records, the
// bytes appendClaim writes for each (records of one term in a row, a change
// of term, partition, topic or group mid-batch, strings encoding/json must
// escape, extreme offsets, a traced record between untraced ones).
func TestClaimTemplate(t *testing.T) {
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5},
		TraceFlags: trace.FlagsSampled})
	traced := trace.ContextWithSpanContext(context.Background(), sc)
	at := time.Date(2026, 11, 30, 21, 45, 1, 123456789, time.FixedZone("x", 3600)).UTC()
	base := Record{Topic: "orders", Partition: 3, Epoch: 7, Member: "m-1", Group: "g"}
	with := func(f func(r *Record)) Record { r := base; f(&r); return r }
	cases := []struct {
		name string
		recs []Record
	}{
		{"one term", []Record{with(func(r *Record) { r.Offset = 0 }), with(func(r *Record) { r.Offset = 1 }),
			with(func(r *Record) { r.Offset = 10 }), with(func(r *Record) { r.Offset = math.MaxInt64 })}},
		{"negative offset", []Record{with(func(r *Record) { r.Offset = -1 })}},
		{"no member, no group", []Record{{Topic: "t", Offset: 5}, {Topic: "t", Offset: 6}}},
		{"term changes mid-batch", []Record{with(func(r *Record) { r.Offset = 1 }), with(func(r *Record) { r.Offset = 2; r.Epoch = 8 }),
			with(func(r *Record) { r.Offset = 3; r.Member = "m-2" }), with(func(r *Record) { r.Offset = 4; r.Group = "replay:x" }),
			with(func(r *Record) { r.Offset = 5; r.Partition = 4 }), with(func(r *Record) { r.Offset = 6; r.Topic = "other" }),
			with(func(r *Record) { r.Offset = 7 })}},
		{"only the epoch changes", []Record{with(func(r *Record) { r.Offset = 1 }), with(func(r *Record) { r.Offset = 2; r.Epoch = 8 })}},
		{"only the member changes", []Record{with(func(r *Record) { r.Offset = 1 }), with(func(r *Record) { r.Offset = 2; r.Member = "m-2" })}},
		{"only the group changes", []Record{with(func(r *Record) { r.Offset = 1 }), with(func(r *Record) { r.Offset = 2; r.Group = "replay:x" })}},
		{"only the partition changes", []Record{with(func(r *Record) { r.Offset = 1 }), with(func(r *Record) { r.Offset = 2; r.Partition = 4 })}},
		{"only the topic changes", []Record{with(func(r *Record) { r.Offset = 1 }), with(func(r *Record) { r.Offset = 2; r.Topic = "other" })}},
		{"strings to escape", []Record{{Topic: "a<b>&\"c\\", Partition: -1, Epoch: -2, Member: "mé\u2028\x01", Group: "g\"<", Offset: 9},
			{Topic: "a<b>&\"c\\", Partition: -1, Epoch: -2, Member: "mé\u2028\x01", Group: "g\"<", Offset: 10}}},
		{"topic holding the mark", []Record{{Topic: `,"offset":0,"epoch":`, Offset: 12}}},
		{"traced between untraced", []Record{with(func(r *Record) { r.Offset = 1 }), with(func(r *Record) { r.Offset = 2; r.Context = traced }),
			with(func(r *Record) { r.Offset = 3 })}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tpl := claimTemplate{at: at}
			for i := range tc.recs {
				r := &tc.recs[i]
				want, _ := appendClaim(nil, claimFor(r, ClaimApplied, at))
				if got := tpl.append([]byte("x"), r); string(got) != "x"+string(want) {
					t.Errorf("record %d:\n got %s\nwant x%s", i, got, want)
				}
			}
		})
	}
}
