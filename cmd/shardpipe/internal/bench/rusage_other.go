//go:build !linux

package bench

import "os"

// maxRSSMB is not measured outside Linux (units differ by system).
func maxRSSMB(*os.ProcessState) float64 { return 0 }

func selfPeakRSSMB() float64 { return 0 }
