package checkpoint

import "time"

func time0() time.Time         { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
func secs(n int) time.Duration { return time.Duration(n) * time.Second }
