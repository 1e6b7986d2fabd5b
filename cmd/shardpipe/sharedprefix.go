package main

import (
	"errors"
	"fmt"

	"github.com/shardpipe/shardpipe/sink"
)

// sharedPrefix words a run or replay (what) stopped on a ledger key that
// holds no claim of its key space (sink.ErrBadClaim): another program's
// key under the prefix, or, most often, the other kind of ledger's (an
// http or sql ledger's guard claims and a none or totals ledger's claims
// cannot share a prefix). nil for any other error.
func sharedPrefix(what string, err error, lc ledgerConfig) error {
	if !errors.Is(err, sink.ErrBadClaim) {
		return nil
	}
	hint := fmt.Sprintf("keys under --ledger-prefix %q hold another ledger's claims (an --effect http or sql ledger and a none or totals ledger cannot share a prefix) or another program's keys: use a separate --ledger-prefix (SHARDPIPE_LEDGER_PREFIX) for each ledger",
		lc.l.Spec.Prefix)
	if lc.guardEffect != "" {
		hint = fmt.Sprintf("a none or totals ledger (or another program) wrote keys under this prefix: use a separate --ledger-prefix (SHARDPIPE_LEDGER_PREFIX) for the %s ledger, not %q",
			lc.guardEffect, lc.l.Spec.Prefix)
	}
	return &exitError{code: exitFailure, lines: []string{fmt.Sprintf("%s: %v", what, err), hint}}
}
