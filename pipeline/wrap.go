package pipeline

import (
	"context"
	"errors"

	"github.com/shardpipe/shardpipe/sink"
)

// The optional interfaces the pipeline looks for on an Applier (Sink):
// Keyer (keyOf: MaxInFlight's order of records without a record key),
// Finisher (finishUnknown: a term's end marks done what ran), and whether
// its effects are external, as Guarded's are (external: a ledger loss
// applies nothing again). Each is found by one function below, which looks
// at the Applier and then down its Unwrap chain, so no wrapper built with
// Wrap, or with an Unwrap method of its own, loses them. (LossReporter is
// looked for on the Barrier, not on the Applier.)

// ApplyFunc is an Applier's Apply as a function. It is an Applier itself,
// with no optional interface: a Middleware's next, or a test's sink.
type ApplyFunc func(ctx context.Context, batch []sink.Record) ([]sink.Result, error)

// Apply calls f(ctx, batch).
func (f ApplyFunc) Apply(ctx context.Context, batch []sink.Record) ([]sink.Result, error) {
	return f(ctx, batch)
}

// Middleware is what an Applier built by Wrap runs for each batch: next is
// the wrapped Applier's Apply. It may act before and after next (log, time,
// pace, trace), call it with another context, or answer for the batch
// without it; what it returns is the batch's outcome, under Applier.Apply's
// contract (one Result per record at its index, or an error when the
// batch's effects are unknown).
type Middleware func(ctx context.Context, batch []sink.Record, next ApplyFunc) ([]sink.Result, error)

// Wrap returns an Applier whose Apply runs m around inner's Apply and that
// keeps what the pipeline looks for on inner: it is a Keyer exactly when
// inner is one (Key goes to inner's), a Finisher exactly when inner is one
// (Finish goes to inner's at once, without m: finishing applies nothing),
// its effects are external exactly when inner's are, and its Unwrap
// returns inner. "Inner is one" counts inner's own Unwrap chain, so Wraps
// nest: Guarded inside any number of them still finishes at a term's end,
// and MaxInFlight still orders its keyless records by business key. A
// wrapper of one's own keeps them the same way by having a method
// Unwrap() Applier that returns the Applier it wraps (as errors.Unwrap
// does for errors); a method it has itself (Key, Finish) wins over the
// wrapped one's. A wrapper with neither loses them: the pipeline then sees
// an Applier that is no Keyer and no Finisher.
//
// It costs one function call per batch; the capabilities are looked up once,
// here (wrap inner when it is built, not later). A nil m calls next; a nil
// inner fails every batch with an error saying so.
func Wrap(inner Applier, m Middleware) Applier {
	next := ApplyFunc(func(context.Context, []sink.Record) ([]sink.Result, error) {
		return nil, errors.New("pipeline: Wrap got no inner Applier")
	})
	if inner != nil {
		next = inner.Apply
	}
	s := &shell{inner: inner, ext: external(inner), apply: next}
	if m != nil {
		s.apply = func(ctx context.Context, batch []sink.Record) ([]sink.Result, error) { return m(ctx, batch, next) }
	}
	if k, ok := keyerOf(inner); ok {
		s.key = k.Key
	}
	if f, ok := finisherOf(inner); ok {
		s.fin = f.Finish
	}
	return s.assemble()
}

// unwrapper is a wrapper that says which Applier it wraps (Wrap).
type unwrapper interface{ Unwrap() Applier }

// capability returns the first of a and the Appliers down its Unwrap chain
// that is a T (a nil Unwrap ends the chain).
func capability[T any](a Applier) (T, bool) {
	for a != nil {
		if t, ok := a.(T); ok {
			return t, true
		}
		u, ok := a.(unwrapper)
		if !ok {
			break
		}
		a = u.Unwrap()
	}
	var none T
	return none, false
}

// keyerOf returns what says a's business keys, if anything does (Wrap).
func keyerOf(a Applier) (Keyer, bool) { return capability[Keyer](a) }

// finisherOf returns what finishes a's batches of unknown outcome, if
// anything does (Wrap).
func finisherOf(a Applier) (Finisher, bool) { return capability[Finisher](a) }

// external reports whether a's effects happen outside Redis: Guarded, or
// an Applier that wraps one (Wrap, Paced, ByTopic with one among its
// topics, an Unwrap chain reaching one).
func external(a Applier) bool {
	for a != nil {
		switch v := a.(type) {
		case guarded:
			return true
		case capable:
			return v.external()
		}
		u, ok := a.(unwrapper)
		if !ok {
			return false
		}
		a = u.Unwrap()
	}
	return false
}
