package admin

// A CheckOpt changes how CheckRedis (and Preflight) check.
type CheckOpt func(*checkConfig)

type checkConfig struct{ onWait func(error) }

// OnWait has CheckRedis call f once, with the error, when Redis does not
// answer the first PING (down, restarting, refusing connections) and it
// keeps asking until its context ends: for a caller to say that it waits
// and why, rather than be silent for the whole deadline. f runs on the
// checking goroutine and should not block.
func OnWait(f func(err error)) CheckOpt { return func(c *checkConfig) { c.onWait = f } }

// ResetOpt configures RequireGroup and ResetOffsets.
type ResetOpt func(*resetConfig)

type resetConfig struct{ create bool }

// CreateGroup lets a reset commit offsets for a group that does not exist,
// which creates it. Without it a missing group (a typo in its name, most
// often) is refused with ErrGroupMissing, and nothing is committed.
func CreateGroup() ResetOpt { return func(c *resetConfig) { c.create = true } }
