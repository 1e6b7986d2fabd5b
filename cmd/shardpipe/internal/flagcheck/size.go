package flagcheck

import (
	"fmt"
	"strconv"
	"strings"
)

// sizeUnits are the units ParseSize takes (case aside) as FormatSize
// writes them: binary (KiB = 1024), largest first, then decimal (KB =
// 1000), then B.
var sizeUnits = []struct {
	name string
	mult int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}}

// binaryUnits are the first three of sizeUnits, those FormatSize uses.
const binaryUnits = 3

// ParseSize reads a size in bytes: a whole number with an optional unit,
// B, KiB, MiB, GiB (powers of 1024) or KB, MB, GB (powers of 1000), case
// aside, with or without a space: "2MiB", "512 KiB", "4096". The error
// says what it wants.
func ParseSize(s string) (int64, error) {
	num, mult := strings.TrimSpace(s), int64(1)
	lower := strings.ToLower(num)
	for _, u := range sizeUnits {
		if strings.HasSuffix(lower, strings.ToLower(u.name)) {
			num, mult = strings.TrimSpace(num[:len(num)-len(u.name)]), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size: want a whole number of bytes with an optional unit (B, KiB, MiB, GiB, KB, MB, GB), e.g. 8MiB", s)
	}
	return n * mult, nil
}

// FormatSize writes n bytes as ParseSize reads it back: in the largest
// binary unit that divides it ("2MiB", "1536KiB", "1000B"), "0B" for 0.
func FormatSize(n int64) string {
	for _, u := range sizeUnits[:binaryUnits] {
		if n != 0 && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
