package sink

import "context"

// Hooks are fault-injection points of Guard.Do, for tests that need to stop
// a worker at the two interesting moments. A hook that returns an error
// makes Do return that error at once and leave Redis exactly as a crash at
// that point would (no release, no done), and the Guard forgets the record
// as a crashed process would: a retry is a new owner. Production code
// leaves them nil.
type Hooks struct {
	// AfterClaim runs after the pending claim is written, before the effect.
	AfterClaim func(ctx context.Context, key string) error
	// AfterEffect runs after the effect succeeded, before the claim is
	// marked done.
	AfterEffect func(ctx context.Context, key string) error
}

func runHook(h func(context.Context, string) error, ctx context.Context, key string) error {
	if h == nil {
		return nil
	}
	return h(ctx, key)
}
