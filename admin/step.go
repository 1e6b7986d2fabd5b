package admin

import "github.com/shardpipe/shardpipe/secure"

// StepFailed says whether err is a TLS, SASL or authorization failure: the
// server is unavailable to these settings.
func StepFailed(err error) bool {
	d := secure.Diagnose(err)
	return d != nil && d.Step != secure.StepConnect
}
