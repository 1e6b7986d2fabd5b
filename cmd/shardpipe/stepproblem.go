package main

import (
	"errors"
	"strings"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/secure"
)

// stepProblem words a TLS, SASL or authorization failure (secure.Diagnose)
// of a check of package admin for the command: the server (kafka is the brokers' name), the
// request, the step that failed and why, what to fix, and the settings
// that fix it, each prefixed by prefix ("--": flags named "kafka-tls-ca",
// "redis-user"...). ok is false for any other error, a failed TCP connect
// included; then admin.StepFailed is false too.
func stepProblem(err error, kafka, prefix string) (line string, ok bool) {
	d := secure.Diagnose(err)
	if d == nil || d.Step == secure.StepConnect {
		return "", false
	}
	server, pre, line := kafka, prefix+"kafka-", d.Error()
	var ue *admin.UnreachableError
	if errors.As(err, &ue) {
		if line = ue.Request + ": " + line; strings.HasPrefix(ue.Server, "redis") {
			server, pre = ue.Server, prefix+"redis-"
		}
	}
	if fl := d.Settings(pre == prefix+"redis-"); len(fl) > 0 {
		line += " (" + pre + strings.Join(fl, ", "+pre) + ")"
	}
	return server + ": " + line, true
}
