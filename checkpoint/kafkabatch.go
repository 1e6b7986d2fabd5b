package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/shardpipe/shardpipe/internal/faults/commitfault"
)

// commitBatcher shares OffsetCommit round trips between partitions (group
// commit). franz-go runs one synchronous commit at a time per client, so a
// request per partition would queue every worker behind the others: with
// 12 partitions a commit would wait for up to 11 round trips. Instead, a
// commit that arrives while another is with the broker waits for it and
// then goes out together with every other commit that arrived meanwhile, in
// one request. Each caller still waits for its own partition's answer.
//
// The caller that sends a request (the leader) sends exactly one, the one
// carrying its own commit, and then hands the lead to the oldest commit that
// queued meanwhile. So a Commit waits for at most two round trips (the
// request in flight when it arrived, then its own) however many partitions
// keep committing, and a leader never holds its partition's in-flight lock
// while it sends for the others.
type commitBatcher struct {
	// send issues one OffsetCommit for rs and sets each r.err. It is the
	// only I/O; the hand-over rules around it are plain code.
	send func(rs []*commitReq)

	mu sync.Mutex
	q  commitQueue
}

type commitReq struct {
	ctx    context.Context
	p      Partition
	offset int64
	epoch  int32  // leader epoch of the record before offset; -1 unknown
	member string // the member ID the partition's term was assigned to; "" any
	err    error
	done   chan struct{} // closed once the request carrying it is answered
	lead   chan struct{} // closed when the lead is handed to this commit
}

func newCommitReq(ctx context.Context, p Partition, offset int64, leaderEpoch int32, member string) *commitReq {
	return &commitReq{ctx: ctx, p: p, offset: offset, epoch: leaderEpoch, member: member,
		done: make(chan struct{}), lead: make(chan struct{})}
}

// commitQueue holds the hand-over rules: who sends, what, and who sends
// next. It does no I/O and takes no lock (commitBatcher holds mu around it).
type commitQueue struct {
	waiting []*commitReq // commits not yet in a request, oldest first
	sending bool         // a leader is sending or about to
}

// join queues r and reports whether r leads (nobody is sending).
func (q *commitQueue) join(r *commitReq) bool {
	q.waiting = append(q.waiting, r)
	lead := !q.sending
	q.sending = true
	return lead
}

// take returns every waiting commit, the leader's own first, for one
// request.
func (q *commitQueue) take() []*commitReq {
	rs := q.waiting
	q.waiting = nil
	return rs
}

// handOver is called by a leader whose request was answered: it returns the
// oldest commit that queued meanwhile, the next leader, or nil when none
// waits and nobody is sending any more.
func (q *commitQueue) handOver() *commitReq {
	if len(q.waiting) == 0 {
		q.sending = false
		return nil
	}
	return q.waiting[0]
}

// commit sends offset (with leaderEpoch) for p, in a request shared with
// other partitions' commits, and returns the broker's answer for p, or
// ErrMemberChanged when the request would go out under another member ID
// than member (unless member is ""). It returns only once the
// request that carried it has finished, whatever ctx does, so that a
// caller holding a partition's in-flight lock keeps it until the commit can
// no longer land. ctx bounds the request when this commit leads it.
func (b *commitBatcher) commit(ctx context.Context, p Partition, offset int64, leaderEpoch int32, member string) error {
	r := newCommitReq(ctx, p, offset, leaderEpoch, member)
	b.mu.Lock()
	lead := b.q.join(r)
	b.mu.Unlock()
	if !lead {
		select {
		case <-r.done: // carried by another leader's request
			return r.err
		case <-r.lead:
		}
	}
	b.mu.Lock()
	rs := b.q.take()
	b.mu.Unlock()
	b.send(rs)
	for _, r := range rs {
		close(r.done)
	}
	b.mu.Lock()
	next := b.q.handOver()
	b.mu.Unlock()
	if next != nil {
		close(next.lead)
	}
	return r.err
}

// kafkaSend returns the send of a batcher on cl: one OffsetCommit for rs
// (one entry per partition at most: a partition's caller holds its
// in-flight lock) under the leader's context, each caller's answer its
// partition's. A commit whose term belongs to another member ID than the
// one franz-go sends the request with is taken out of it, as franz-go
// builds it (after any rejoin), and answered ErrMemberChanged.
func kafkaSend(cl *kgo.Client) func(rs []*commitReq) {
	return func(rs []*commitReq) {
		offsets := make(map[string]map[int32]kgo.EpochOffset)
		for _, r := range rs {
			if offsets[r.p.Topic] == nil {
				offsets[r.p.Topic] = make(map[int32]kgo.EpochOffset)
			}
			offsets[r.p.Topic][r.p.Partition] = kgo.EpochOffset{Epoch: r.epoch, Offset: r.offset}
		}
		var (
			reqErr error
			perP   = make(map[Partition]error)
		)
		before := commitfault.From(rs[0].ctx)
		ctx := kgo.PreCommitFnContext(rs[0].ctx, func(req *kmsg.OffsetCommitRequest) error {
			if before != nil {
				if err := before(req); err != nil {
					return err
				}
			}
			for _, r := range rs {
				if r.member != "" && r.member != req.MemberID {
					perP[r.p] = fmt.Errorf("%w: the term's member %s, the request's %s (generation %d)",
						ErrMemberChanged, r.member, req.MemberID, req.Generation)
				}
			}
			dropMembersChanged(req, perP)
			return nil
		})
		cl.CommitOffsetsSync(ctx, offsets,
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
			r.err = perP[r.p]
			if r.err == nil || !errors.Is(r.err, ErrMemberChanged) && reqErr != nil {
				r.err = reqErr
			}
		}
	}
}

// dropMembersChanged takes the partitions refused in refused out of req.
func dropMembersChanged(req *kmsg.OffsetCommitRequest, refused map[Partition]error) {
	if len(refused) == 0 {
		return
	}
	topics := req.Topics[:0]
	for _, t := range req.Topics {
		ps := t.Partitions[:0]
		for _, p := range t.Partitions {
			if refused[Partition{Topic: t.Topic, Partition: p.Partition}] == nil {
				ps = append(ps, p)
			}
		}
		if t.Partitions = ps; len(ps) > 0 {
			topics = append(topics, t)
		}
	}
	req.Topics = topics
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
