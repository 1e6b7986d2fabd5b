package admin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Describe words e for whoever set brokers (the seed brokers) and timeout
// (the deadline of the checks): a broker that cannot be reached names the
// brokers, and says no broker answered within timeout when the deadline
// passed; a Redis PING or INFO the deadline cut says no answer within
// timeout; anything else is Error.
func (e *UnreachableError) Describe(brokers []string, timeout time.Duration) string {
	switch {
	case e.Server == "kafka" && strings.HasPrefix(e.Error(), "kafka: cannot reach a broker: "):
		if errors.Is(e.Err, context.DeadlineExceeded) {
			return fmt.Sprintf("kafka %s: no broker answered within %v", strings.Join(brokers, ","), timeout)
		}
		return fmt.Sprintf("kafka %s: cannot reach a broker: %v", strings.Join(brokers, ","), e.Err)
	case errors.Is(e.Err, context.DeadlineExceeded) && (e.Request == "PING" || strings.HasPrefix(e.Request, "INFO ")):
		return fmt.Sprintf("%s: no answer to %s within %v", e.Server, e.Request, timeout)
	}
	return e.Error()
}
