package checkpoint

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// commitBatcher shares OffsetCommit round trips between partitions (group
// commit). franz-go runs one synchronous commit at a time per client, so a
// request per partition would queue every worker behind the others: with
// 12 partitions a commit would wait for up to 11 round trips. Instead, a
// commit that arrives while another is with the broker waits for it and
// then goes out together with every other commit that arrived meanwhile, in
// one request. Each caller still waits for its own partition's answer.
type commitBatcher struct {
	cl *kgo.Client

	mu      sync.Mutex
	queue   []*commitReq
	sending bool
}

type commitReq struct {
	ctx    context.Context
	p      Partition
	offset int64
	err    error
	done   chan struct{}
}

// commit sends offset for p, in a request shared with other partitions'
// commits, and returns the broker's answer for p. It returns only once the
// request that carried it has finished, whatever ctx does, so that a
// caller holding a partition's in-flight lock keeps it until the commit can
// no longer land. ctx bounds the request when it is the oldest waiting.
func (b *commitBatcher) commit(ctx context.Context, p Partition, offset int64) error {
	r := &commitReq{ctx: ctx, p: p, offset: offset, done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, r)
	lead := !b.sending
	b.sending = true
	b.mu.Unlock()
	if lead {
		b.flush()
	}
	<-r.done
	return r.err
}

// flush sends the queue, again and again, until it is empty.
func (b *commitBatcher) flush() {
	for {
		b.mu.Lock()
		rs := b.queue
		b.queue = nil
		if len(rs) == 0 {
			b.sending = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		b.send(rs)
	}
}

// send issues one OffsetCommit for rs (one request per partition at most:
// a partition's caller holds its in-flight lock) under the oldest caller's
// context and hands each caller its partition's answer.
func (b *commitBatcher) send(rs []*commitReq) {
	offsets := make(map[string]map[int32]kgo.EpochOffset)
	for _, r := range rs {
		if offsets[r.p.Topic] == nil {
			offsets[r.p.Topic] = make(map[int32]kgo.EpochOffset)
		}
		offsets[r.p.Topic][r.p.Partition] = kgo.EpochOffset{Epoch: -1, Offset: r.offset}
	}
	var (
		reqErr error
		perP   = make(map[Partition]error)
	)
	b.cl.CommitOffsetsSync(rs[0].ctx, offsets,
		func(_ *kgo.Client, req *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
			if err != nil {
				reqErr = err
				return
			}
			for _, rt := range resp.Topics {
				topic := responseTopic(req, rt)
				for _, rp := range rt.Partitions {
					if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
						perP[Partition{Topic: topic, Partition: rp.Partition}] = err
					}
				}
			}
		})
	for _, r := range rs {
		r.err = reqErr
		if r.err == nil {
			r.err = perP[r.p]
		}
		close(r.done)
	}
}

// responseTopic names a topic of an OffsetCommit response. From v10 on the
// broker answers with topic IDs only; franz-go fills the names in for a
// response to its own member and generation, but not when the member's
// generation changed while the commit was in flight, which is when the broker
// refuses it: the name is then taken from the request.
func responseTopic(req *kmsg.OffsetCommitRequest, rt kmsg.OffsetCommitResponseTopic) string {
	if rt.Topic != "" {
		return rt.Topic
	}
	for _, t := range req.Topics {
		if t.TopicID == rt.TopicID {
			return t.Topic
		}
	}
	return ""
}
