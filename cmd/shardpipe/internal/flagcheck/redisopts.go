package flagcheck

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// clients is a set of the Redis clients a URL can make.
type clients uint8

const (
	single clients = 1 << iota
	clusterClient
	sentinel

	anyClient = single | clusterClient | sentinel
)

// optKind is what a URL option's value is.
type optKind uint8

const (
	kString   optKind = iota
	kInt              // a whole number
	kDuration         // go-redis's: a number of seconds, or a Go duration
	kBool             // true, false, 1, 0 or empty
	kAddr             // host:port
)

// redisOption is a query option of a redis:// URL that go-redis takes,
// with the range of a number or a duration.
type redisOption struct {
	name string
	kind optKind
	on   clients
	ints Range[int64]
	durs Range[time.Duration]
}

// The ranges of the URL options (docs/configuration.md's table of ranges): pools and
// buffers small enough to allocate, counts and durations go-redis cannot
// overflow, 0 where it means go-redis's default or none.
const (
	maxConns   = 10000
	maxBuffer  = 16 << 20
	maxRetries = 100
	day        = 24 * time.Hour
)

// redisOptions are the query options go-redis's ParseURL (single),
// ParseClusterURL (cluster) and ParseFailoverURL (sentinel) take; any other
// is refused. skip_verify is taken only with rediss:// (not on cluster).
func redisOptions() []redisOption {
	sc := single | sentinel
	cs := clusterClient | sentinel
	num := func(name string, on clients, min, max int64, note string) redisOption {
		return redisOption{name: name, kind: kInt, on: on, ints: In(min, max, note)}
	}
	dur := func(name string, on clients, min time.Duration) redisOption {
		note := ""
		if min == 0 {
			note = "0: none"
		}
		return redisOption{name: name, kind: kDuration, on: on, durs: In(min, day, note)}
	}
	conns := func(name string) redisOption { return num(name, anyClient, 0, maxConns, "0: go-redis's default") }
	buffer := func(name string) redisOption { return num(name, anyClient, 0, maxBuffer, "bytes; 0: the default") }
	retries := func(name string, on clients) redisOption {
		return num(name, on, -1, maxRetries, "-1: none; 0: go-redis's default")
	}
	return []redisOption{
		num("db", sc, 0, 1<<31-1, ""),
		num("protocol", anyClient, 2, 3, ""),
		{name: "client_name", on: anyClient},
		retries("max_retries", anyClient),
		dur("min_retry_backoff", anyClient, 0),
		dur("max_retry_backoff", anyClient, 0),
		dur("dial_timeout", anyClient, time.Millisecond),
		num("dialer_retries", cs, 0, maxRetries, ""),
		dur("dialer_retry_timeout", cs, time.Millisecond),
		dur("read_timeout", anyClient, 0),
		dur("write_timeout", anyClient, 0),
		{name: "pool_fifo", kind: kBool, on: anyClient},
		conns("pool_size"),
		dur("pool_timeout", anyClient, time.Millisecond),
		conns("min_idle_conns"),
		conns("max_idle_conns"),
		conns("max_active_conns"),
		conns("max_concurrent_dials"),
		num("pipeline_pool_size", anyClient, -1, maxConns, "-1: none"),
		buffer("pipeline_read_buffer_size"),
		buffer("pipeline_write_buffer_size"),
		dur("conn_max_idle_time", anyClient, 0),
		dur("idle_timeout", single, 0),
		dur("conn_max_lifetime", anyClient, 0),
		dur("max_conn_age", single, 0),
		dur("conn_max_lifetime_jitter", anyClient, 0),
		{name: "skip_verify", kind: kBool, on: sc},
		{name: "addr", kind: kAddr, on: cs},
		retries("max_redirects", clusterClient),
		{name: "read_only", kind: kBool, on: clusterClient},
		{name: "route_by_latency", kind: kBool, on: cs},
		dur("route_by_latency_tolerance", cs, 0),
		{name: "route_randomly", kind: kBool, on: cs},
		num("failing_timeout_seconds", clusterClient, 0, 3600, ""),
		{name: "master_name", on: sentinel},
		{name: "replica_only", kind: kBool, on: sentinel},
		{name: "use_disconnected_replicas", kind: kBool, on: sentinel},
		{name: "username", on: sentinel},
		{name: "password", on: sentinel},
		{name: "context_timeout_enabled", kind: kBool, on: sentinel},
		{name: "disableIdentity", kind: kBool, on: sentinel},
		{name: "identitySuffix", on: sentinel},
		{name: "unstable_resp3", kind: kBool, on: sentinel},
	}
}

// checkURL returns one error per problem of u, a URL for client c: its
// scheme, its path (the database) and each query option, naming the part
// or the option but none of their values.
func checkURL(u *url.URL, c clients) []error {
	var errs []error
	switch {
	case u.Scheme == "unix" && c == single:
		if strings.TrimSpace(u.Path) == "" {
			errs = append(errs, errors.New("the Redis URL unix:// has no socket path"))
		}
	case u.Scheme != "redis" && u.Scheme != "rediss":
		errs = append(errs, errors.New("the Redis URL's scheme: want redis:// or rediss://"))
	default:
		errs = append(errs, checkPath(u, c)...)
	}
	q := u.Query()
	opts := redisOptions()
	for _, name := range slices.Sorted(maps.Keys(q)) {
		i := slices.IndexFunc(opts, func(o redisOption) bool { return o.name == name && o.on&c != 0 })
		if i < 0 || name == "skip_verify" && u.Scheme != "rediss" {
			errs = append(errs, fmt.Errorf("the Redis URL: unexpected option: %s", url.QueryEscape(name)))
			continue
		}
		for _, v := range q[name] {
			if msg := opts[i].check(v); msg != "" {
				errs = append(errs, fmt.Errorf("the Redis URL's option %s: %s", name, msg))
				break
			}
		}
	}
	return errs
}

// checkPath checks the database number of u's path: /DB on one node or
// Sentinel; none (or /0) on Redis Cluster, which has database 0 only.
func checkPath(u *url.URL, c clients) []error {
	f := strings.FieldsFunc(u.Path, func(r rune) bool { return r == '/' })
	switch {
	case len(f) == 0:
		return nil
	case len(f) > 1:
		return []error{errors.New("the Redis URL's path: want /DB, DB a database number")}
	case c == clusterClient && f[0] != "0":
		return []error{errors.New("the Redis URL's path: Redis Cluster has database 0 only")}
	}
	if n, err := strconv.ParseInt(f[0], 10, 64); err != nil || n < 0 || n > 1<<31-1 {
		return []error{errors.New("the Redis URL's path: want /DB, DB a database number 0 to 2147483647")}
	}
	return nil
}

// check says what is wrong with v as o's value (its kind, its range), or
// "", without v.
func (o redisOption) check(v string) string {
	switch o.kind {
	case kInt:
		if v == "" {
			return "" // go-redis's default
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return "want a whole number, " + o.ints.String()
		}
		return o.ints.Check(n)
	case kDuration:
		d, ok := redisDuration(v)
		if !ok {
			return "want a duration (500ms, 5s) or a whole number of seconds, " + o.durs.String()
		}
		if v == "" {
			return "" // go-redis's default
		}
		return o.durs.Check(d)
	case kBool:
		if !slices.Contains([]string{"true", "false", "1", "0", ""}, v) {
			return "want true, false, 1 or 0"
		}
	case kAddr:
		if HostPort(v) != "" {
			return "want host:port, the port a number from 1 to 65535"
		}
	}
	return ""
}

// redisDuration reads v as go-redis does: a whole number of seconds or a
// Go duration; empty is go-redis's default (0).
func redisDuration(v string) (time.Duration, bool) {
	if v == "" {
		return 0, true
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n > int64(time.Duration(1<<63-1)/time.Second) || n < -int64(time.Duration(1<<63-1)/time.Second) {
			return 0, false
		}
		return time.Duration(n) * time.Second, true
	}
	d, err := time.ParseDuration(v)
	return d, err == nil
}
