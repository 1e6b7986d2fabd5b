package flagcheck

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// HostPort says what is wrong with a host:port address to dial, or "".
func HostPort(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "want host:port"
	}
	if host == "" {
		return "no host; want host:port"
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Sprintf("port %q is not a number from 1 to 65535", port)
	}
	return ""
}

// ListenAddr says what is wrong with an address to listen on, or "":
// host:port or :port, the port a number from 0 (any free port) to 65535.
func ListenAddr(addr string) string {
	_, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return "want host:port or :port"
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return fmt.Sprintf("port %q is not a number from 0 to 65535", port)
	}
	return ""
}

// Topic says why t is not a legal Kafka topic name, or "".
func Topic(t string) string {
	if len(t) > 249 {
		return "longer than 249 characters"
	}
	if t == "." || t == ".." {
		return "not a legal topic name"
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Sprintf("character %q not allowed; topics use [a-zA-Z0-9._-]", r)
		}
	}
	return ""
}

// SplitList flattens comma-separated values, trims them and drops empty ones.
func SplitList(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// Partitions reads a comma-separated list of partition numbers. Each item
// that is not a partition number is named in bad, one message each.
func Partitions(s string) (ps []int32, bad []string) {
	for _, f := range SplitList([]string{s}) {
		n, err := strconv.ParseInt(f, 10, 32)
		if err != nil || n < 0 {
			bad = append(bad, fmt.Sprintf("%q is not a partition number", f))
			continue
		}
		ps = append(ps, int32(n))
	}
	return ps, bad
}

// HashTag returns the Redis Cluster hash tag of key ("" when none).
func HashTag(key string) string {
	i := strings.IndexByte(key, '{')
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(key[i+1:], '}')
	if j <= 0 {
		return ""
	}
	return key[i+1 : i+1+j]
}
