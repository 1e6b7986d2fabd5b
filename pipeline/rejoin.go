package pipeline

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// renewTerms ends, as lost, the terms this client still holds from an
// earlier group membership, and returns assigned with their partitions
// added, to start again in terms of member.
//
// A classic member whose session expired while it was stopped can learn of
// it from its JoinGroup (UNKNOWN_MEMBER_ID); franz-go then rejoins at once as
// a new member, with no OnPartitionsLost. Partitions the new member is
// assigned again are neither revoked nor added, so their workers would go
// on from where the old member was, although the group may have given them
// to another member meanwhile, which consumed and committed past them. So
// their terms end without a commit (the store refuses those commits
// anyway: checkpoint.ErrMemberChanged), and each partition is read again
// from its committed offset (the log start when none), in a new term; the
// ledger suppresses what had landed. If the committed offsets cannot be
// read, the pipeline stops with the error rather than guess.
func (p *Pipeline) renewTerms(ctx context.Context, cl *kgo.Client, member string, assigned map[string][]int32) map[string][]int32 {
	stale := map[string][]int32{}
	p.mu.Lock()
	for part, w := range p.workers {
		if w.member != member {
			stale[part.Topic] = append(stale[part.Topic], part.Partition)
		}
	}
	p.mu.Unlock()
	if len(stale) == 0 {
		return assigned
	}
	p.cfg.logger.Warn("rejoined the group as a new member: the old member's terms end; the partitions kept are read again from their committed offsets",
		"member", member, "partitions", stale)
	p.endTerms(stale, true, "")
	offsets, err := p.resumeAt(ctx, cl, stale)
	if err != nil {
		p.fail(fmt.Errorf("pipeline: partitions %v, kept across a rejoin as a new member, cannot be read again from their committed offsets: %w", stale, err))
		return assigned // no worker: dispatch pauses them
	}
	cl.SetOffsets(offsets)
	out := maps.Clone(assigned)
	if out == nil {
		out = map[string][]int32{}
	}
	for topic, ns := range stale {
		for _, n := range ns {
			if !slices.Contains(out[topic], n) {
				out[topic] = append(out[topic], n)
			}
		}
	}
	return out
}

// resumeAt returns where each partition of parts is read again: its
// committed offset, or its log start when it has none.
func (p *Pipeline) resumeAt(ctx context.Context, cl *kgo.Client, parts map[string][]int32) (map[string]map[int32]kgo.EpochOffset, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.commitTimeout)
	defer cancel()
	adm := kadm.NewClient(cl)
	committed, err := adm.FetchOffsets(ctx, p.cfg.group)
	if err == nil {
		err = committed.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("fetch the committed offsets of group %q: %w", p.cfg.group, err)
	}
	out := map[string]map[int32]kgo.EpochOffset{}
	for topic, ns := range parts {
		out[topic] = map[int32]kgo.EpochOffset{}
		var starts kadm.ListedOffsets
		for _, n := range ns {
			if o, ok := committed.Lookup(topic, n); ok && o.At >= 0 {
				out[topic][n] = kgo.EpochOffset{Epoch: o.LeaderEpoch, Offset: o.At}
				continue
			}
			if starts == nil {
				if starts, err = adm.ListStartOffsets(ctx, topic); err == nil {
					err = starts.Error()
				}
				if err != nil {
					return nil, fmt.Errorf("list the start offsets of %s: %w", topic, err)
				}
			}
			s, _ := starts.Lookup(topic, n)
			out[topic][n] = kgo.EpochOffset{Epoch: -1, Offset: s.Offset}
		}
	}
	return out, nil
}
