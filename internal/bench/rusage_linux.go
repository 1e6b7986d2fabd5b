package bench

import (
	"os"
	"syscall"
)

// maxRSSMB is the child's peak resident set; Linux reports it in KiB.
func maxRSSMB(st *os.ProcessState) float64 {
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		return float64(ru.Maxrss) / 1024
	}
	return 0
}
