package admin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/shardpipe/shardpipe/pipeline"
)

// Target is where PlanReset moves a group's offsets.
type Target struct {
	bound  pipeline.Bound
	latest bool
}

// ToBound is the target at b: an offset, clamped to each partition's log
// start and end, or the first record at or after a time.
func ToBound(b pipeline.Bound) Target { return Target{bound: b} }

// Earliest is the target at each partition's log start.
func Earliest() Target { return Target{bound: pipeline.AtOffset(0)} }

// Latest is the target at each partition's end (its last stable offset).
func Latest() Target { return Target{latest: true} }

// Move is one partition's committed offset before and after a reset.
type Move struct {
	// Partition is the partition of the reset's topic.
	Partition int32
	// Before is the group's committed offset; -1 when nothing is committed.
	Before int64
	// After is the offset the reset commits.
	After int64
}

// PlanReset computes the moves of a reset of group's offsets on topic to
// to, for the given partitions (every partition of the topic when none).
// It reads only: offsets by time or position (pipeline.PlanReplay) and the
// group's committed offsets. A partition the topic does not have is an
// error wrapping pipeline.ErrUnknownPartition; a request that fails an
// *UnreachableError.
func PlanReset(ctx context.Context, adm *kadm.Client, group, topic string, to Target, partitions ...int32) ([]Move, error) {
	// The target per partition is the From of a one-bound plan: an offset
	// or a time clamped to [log start, end]; latest is the end.
	ranges, err := pipeline.PlanReplay(ctx, adm, topic, partitions, to.bound, pipeline.Bound{})
	if errors.Is(err, pipeline.ErrUnknownPartition) {
		return nil, err
	}
	if err != nil {
		return nil, unreachable("kafka", "ListOffsets", err, err.Error())
	}
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return nil, unreachable("kafka", "OffsetFetch", err, fmt.Sprintf("committed offsets of group %q: %v", group, err))
	}
	moves := make([]Move, 0, len(ranges))
	for _, rg := range ranges {
		m := Move{Partition: rg.Partition, Before: -1, After: rg.From}
		if to.latest {
			m.After = rg.To
		}
		if o, ok := committed.Lookup(topic, rg.Partition); ok && o.Err == nil {
			m.Before = o.At
		}
		moves = append(moves, m)
	}
	return moves, nil
}

// ReadAgain returns the ranges the group would read a second time after
// moves: from each moved-back partition's new offset up to its committed
// one. Check them with ExpiryCheck before the reset.
func ReadAgain(moves []Move) []pipeline.Range {
	var back []pipeline.Range
	for _, m := range moves {
		if m.Before > m.After {
			back = append(back, pipeline.Range{Partition: m.Partition, From: m.After, To: m.Before})
		}
	}
	return back
}

// RequireNoMembers returns a *CheckError wrapping ErrGroupActive, naming
// the group's state and members, when group has active members, of either
// protocol: offsets are not moved under a live group, whose next commit
// would undo the move. A group that does not exist has none. It costs a
// ListGroups request and a describe.
func RequireNoMembers(ctx context.Context, adm *kadm.Client, group string) error {
	_, _, err := checkGroup(ctx, adm, group)
	return err
}

// RequireGroup is RequireNoMembers that also refuses, with a *CheckError
// wrapping ErrGroupMissing (its Near naming the existing groups closest to
// group), a group that does not exist, unless CreateGroup is given. It costs a ListGroups request and, for a group that exists, a
// describe.
func RequireGroup(ctx context.Context, adm *kadm.Client, group string, opts ...ResetOpt) error {
	var cfg resetConfig
	for _, o := range opts {
		o(&cfg)
	}
	exists, groups, err := checkGroup(ctx, adm, group)
	if err != nil || exists || cfg.create {
		return err
	}
	e := &CheckError{Server: "kafka", Setting: "group", Value: group, Err: ErrGroupMissing,
		Fix: "check the group's name; to create the group with these offsets, ask for it (CreateGroup)", Near: near(group, groups)}
	e.msg = fmt.Sprintf("group %q does not exist%s: check its name; offsets are moved only for an existing group unless creating it is asked for",
		group, e.DidYouMean())
	return e
}

// checkGroup reports whether group exists, with the groups listed, and a
// *CheckError wrapping ErrGroupActive when it has members.
func checkGroup(ctx context.Context, adm *kadm.Client, group string) (bool, []string, error) {
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return false, nil, unreachable("kafka", "ListGroups", err, fmt.Sprintf("list groups: %v", err))
	}
	lg, ok := listed[group]
	if !ok {
		return false, listed.Groups(), nil
	}
	st := GroupStatus{Group: group, Type: lg.GroupType}
	if _, err := describeMembers(ctx, adm, &st); err != nil {
		return true, nil, unreachable("kafka", "DescribeGroups", err, err.Error())
	}
	if n := len(st.Members); n > 0 {
		ids := make([]string, 0, n)
		for _, m := range st.Members {
			ids = append(ids, m.ID)
		}
		return true, nil, &CheckError{Server: "kafka", Setting: "members", Value: strings.Join(ids, ", "), Err: ErrGroupActive,
			Fix: "stop every consumer of the group first",
			msg: fmt.Sprintf("group %q has %d active member(s) (state %s: %s): stop every consumer of the group first; offsets are not moved under a live group",
				group, n, st.State, strings.Join(ids, ", "))}
	}
	return true, nil, nil
}

// ResetOffsets commits moves for group on topic, after RequireGroup once
// more (a consumer may have joined since the plan): a group with members is
// refused with ErrGroupActive, one that does not exist with ErrGroupMissing
// unless CreateGroup is given. It costs RequireGroup's requests and one
// OffsetCommit.
func ResetOffsets(ctx context.Context, adm *kadm.Client, group, topic string, moves []Move, opts ...ResetOpt) error {
	if err := RequireGroup(ctx, adm, group, opts...); err != nil {
		return err
	}
	offs := kadm.Offsets{}
	for _, m := range moves {
		offs.AddOffset(topic, m.Partition, m.After, -1)
	}
	resp, err := adm.CommitOffsets(ctx, group, offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("commit offsets of group %q on %s: %w", group, topic, err)
	}
	return nil
}
