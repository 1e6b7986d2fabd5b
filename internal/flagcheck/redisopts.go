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

// redisOption is a query option of a redis:// URL that go-redis takes.
type redisOption struct {
	name string
	kind optKind
	on   clients
}

// redisOptions are the query options go-redis's ParseURL (single),
// ParseClusterURL (cluster) and ParseFailoverURL (sentinel) take; any other
// is refused. skip_verify is taken only with rediss:// (not on cluster).
func redisOptions() []redisOption {
	sc := single | sentinel
	cs := clusterClient | sentinel
	return []redisOption{
		{"db", kInt, sc},
		{"protocol", kInt, anyClient},
		{"client_name", kString, anyClient},
		{"max_retries", kInt, anyClient},
		{"min_retry_backoff", kDuration, anyClient},
		{"max_retry_backoff", kDuration, anyClient},
		{"dial_timeout", kDuration, anyClient},
		{"dialer_retries", kInt, cs},
		{"dialer_retry_timeout", kDuration, cs},
		{"read_timeout", kDuration, anyClient},
		{"write_timeout", kDuration, anyClient},
		{"pool_fifo", kBool, anyClient},
		{"pool_size", kInt, anyClient},
		{"pool_timeout", kDuration, anyClient},
		{"min_idle_conns", kInt, anyClient},
		{"max_idle_conns", kInt, anyClient},
		{"max_active_conns", kInt, anyClient},
		{"max_concurrent_dials", kInt, anyClient},
		{"pipeline_pool_size", kInt, anyClient},
		{"pipeline_read_buffer_size", kInt, anyClient},
		{"pipeline_write_buffer_size", kInt, anyClient},
		{"conn_max_idle_time", kDuration, anyClient},
		{"idle_timeout", kDuration, single},
		{"conn_max_lifetime", kDuration, anyClient},
		{"max_conn_age", kDuration, single},
		{"conn_max_lifetime_jitter", kDuration, anyClient},
		{"skip_verify", kBool, sc},
		{"addr", kAddr, cs},
		{"max_redirects", kInt, clusterClient},
		{"read_only", kBool, clusterClient},
		{"route_by_latency", kBool, cs},
		{"route_by_latency_tolerance", kDuration, cs},
		{"route_randomly", kBool, cs},
		{"failing_timeout_seconds", kInt, clusterClient},
		{"master_name", kString, sentinel},
		{"replica_only", kBool, sentinel},
		{"use_disconnected_replicas", kBool, sentinel},
		{"username", kString, sentinel},
		{"password", kString, sentinel},
		{"context_timeout_enabled", kBool, sentinel},
		{"disableIdentity", kBool, sentinel},
		{"identitySuffix", kString, sentinel},
		{"unstable_resp3", kBool, sentinel},
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
	if _, err := strconv.Atoi(f[0]); err != nil {
		return []error{errors.New("the Redis URL's path: want /DB, DB a database number")}
	}
	return nil
}

// check says what is wrong with v as o's value, or "".
func (o redisOption) check(v string) string {
	switch o.kind {
	case kInt:
		if _, err := strconv.Atoi(v); err != nil && v != "" {
			return "want a whole number"
		}
	case kDuration:
		if _, ok := redisDuration(v); !ok {
			return "want a duration (500ms, 5s) or a whole number of seconds"
		}
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
