package settings

import (
	"fmt"
	"time"

	"github.com/shardpipe/shardpipe/sink"
)

// Manifest is the ledger's manifest l's settings make, for topics, written
// by version.
func (l Ledger) Manifest(topics []string, version string) sink.Manifest {
	m := sink.Manifest{Effect: "none", KeySpace: l.KeySpace(), Topics: topics, ClaimFormat: sink.ClaimFormat,
		CreatedAt: time.Now().UTC(), CreatedBy: version}
	switch {
	case l.HTTP:
		m.Effect = "http"
	case l.SQL:
		m.Effect = "sql"
	case l.Spec.Totals != nil:
		t := l.Spec.Totals
		m.Effect, m.TotalsHash, m.TotalsGroupField, m.TotalsAmountField = "totals", t.Hash, t.GroupField, t.AmountField
	}
	return m
}

// given reports whether the manifest setting name (sink.ManifestField.Name)
// was set by a flag or variable.
func (g LedgerGiven) given(name string) bool {
	switch name {
	case "effect":
		return g.Effect
	case "key_space":
		return g.KeySpace
	case "totals_hash":
		return g.TotalsHash
	case "totals_group_field":
		return g.TotalsGroupField
	case "totals_amount_field":
		return g.TotalsAmountField
	}
	return true
}

// flagOf names the flag of the manifest setting name, as messages do.
func flagOf(name string) string {
	return map[string]string{"effect": FlagEffect, "key_space": fKeySpace, "totals_hash": fTotalsHash,
		"totals_group_field": fTotalsGroup, "totals_amount_field": fTotalsAmount}[name]
}

// Reconcile checks l against stored, the ledger's manifest: a setting
// given (flag or variable) that differs is a problem line naming the
// stored and the given value; one not given takes the manifest's (l is
// changed). An http or sql ledger's effect is not taken: it needs --http-url or
// --sql-url, so it must be given. It returns the problems and the settings taken.
func (l *Ledger) Reconcile(stored sink.Manifest) (problems, taken []string) {
	given := l.Manifest(nil, "")
	if !l.Given.Effect && stored.Effect == "totals" && given.Effect != "totals" {
		// The effect is taken from the manifest: its totals settings are
		// compared with the flags, so a --totals-hash given is checked, not
		// dropped.
		t := l.totals
		given.TotalsHash, given.TotalsGroupField, given.TotalsAmountField = t.Hash, t.GroupField, t.AmountField
	}
	for _, d := range stored.Differences(given) {
		if l.Given.given(d.Name) || d.Name == "effect" && stored.Effect != "none" && stored.Effect != "totals" {
			problems = append(problems, fmt.Sprintf("%s %q: the ledger under %s %q was made with %q (its manifest)",
				ref(flagOf(d.Name)), d.Given, ref(FlagLedgerPrefix), l.Spec.Prefix, d.Stored))
			continue
		}
		taken = append(taken, fmt.Sprintf("%s=%s", flagOf(d.Name), d.Stored))
	}
	if len(problems) > 0 {
		return problems, nil
	}
	l.Spec.PerTopic = stored.KeySpace == "per-topic"
	switch stored.Effect {
	case "none":
		l.Spec.Totals = nil
	case "totals":
		l.Spec.Totals = &sink.Totals{Hash: stored.TotalsHash, GroupField: stored.TotalsGroupField, AmountField: stored.TotalsAmountField}
	}
	return nil, taken
}
