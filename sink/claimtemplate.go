package sink

import (
	"bytes"
	"strconv"
	"time"
)

// claimTemplate writes the Ledger claims of one batch. The records of a
// batch share everything a claim holds but the offset (topic, partition,
// epoch, member, group, the time and the state), so the template encodes
// that once, around the offset, and each claim is the head, the offset's
// digits and the tail: the same bytes as appendClaim, without quoting the
// strings and formatting the time for every record. A record that differs
// (another term, a span of its own) rebuilds the template or is encoded in
// full.
type claimTemplate struct {
	at         time.Time
	key        Record // topic, partition, epoch, member, group the template is for
	head, tail []byte // the claim before and after the offset's digits
	whole      []byte // the claim head and tail are cut from, reused by build
	ok         bool
}

// claimOffsetMark splits the template's claim around the offset (0).
const claimOffsetMark = `,"offset":0,"epoch":`

// append appends r's applied claim to b.
func (t *claimTemplate) append(b []byte, r *Record) []byte {
	if traceOf(r) != "" {
		b, _ = appendClaim(b, claimFor(r, ClaimApplied, t.at)) // at is in range
		return b
	}
	if !t.ok || !t.fits(r) {
		t.build(r)
	}
	b = append(b, t.head...)
	b = strconv.AppendInt(b, r.Offset, 10)
	return append(b, t.tail...)
}

// fits reports whether r's claim differs from the template's only in its
// offset.
func (t *claimTemplate) fits(r *Record) bool {
	k := &t.key
	return r.Partition == k.Partition && r.Epoch == k.Epoch && r.Topic == k.Topic &&
		r.Member == k.Member && r.Group == k.Group
}

// build encodes r's claim with offset 0 and splits it there.
func (t *claimTemplate) build(r *Record) {
	c := claimFor(r, ClaimApplied, t.at)
	c.Offset, c.Trace = 0, ""
	whole, _ := appendClaim(t.whole[:0], c) // at is in range
	t.whole = whole
	i := bytes.Index(whole, []byte(claimOffsetMark)) + len(`,"offset":`)
	t.head, t.tail = whole[:i], whole[i+1:]
	t.key = Record{Topic: r.Topic, Partition: r.Partition, Epoch: r.Epoch, Member: r.Member, Group: r.Group}
	t.ok = true
}
