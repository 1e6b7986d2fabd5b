package bench

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// maxRSSMB is the child's peak resident set. The rusage of a child started
// with fork and exec also counts the parent's resident set at the fork
// (Linux carries the high-water mark across exec), so the child's own
// VmHWM, which it reports itself, is preferred.
func maxRSSMB(st *os.ProcessState) float64 {
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		return float64(ru.Maxrss) / 1024
	}
	return 0
}

// selfPeakRSSMB reads this process's VmHWM from /proc/self/status; 0 when
// it cannot.
func selfPeakRSSMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmHWM:")); ok {
			f := bytes.Fields(v)
			if len(f) >= 1 {
				kb, err := strconv.ParseFloat(string(f[0]), 64)
				if err == nil {
					return kb / 1024
				}
			}
		}
	}
	return 0
}
