package flagcheck

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/shardpipe/shardpipe/secure"
)

// TestParseRedisOptions: a redis:// URL's query options reach the client;
// an unknown one is rejected.
func TestParseRedisOptions(t *testing.T) {
	tests := []struct {
		name, spec string
		cluster    bool
		check      func(t *testing.T, rdb redis.UniversalClient)
		err        string
	}{
		{"url options", "redis://u:secret@h:6380/2?protocol=2&dial_timeout=3s&read_timeout=4s&pool_size=7&max_retries=5&client_name=sp", false,
			func(t *testing.T, rdb redis.UniversalClient) {
				c, ok := rdb.(*redis.Client)
				if !ok {
					t.Fatalf("client %T, want *redis.Client", rdb)
				}
				o := c.Options()
				if o.Addr != "h:6380" || o.Username != "u" || o.Password != "secret" || o.DB != 2 || o.Protocol != 2 ||
					o.DialTimeout != 3*time.Second || o.ReadTimeout != 4*time.Second || o.PoolSize != 7 ||
					o.MaxRetries != 5 || o.ClientName != "sp" || !o.ContextTimeoutEnabled {
					t.Fatalf("options %+v", o)
				}
			}, ""},
		{"rediss", "rediss://h:6380", false, func(t *testing.T, rdb redis.UniversalClient) {
			if o := rdb.(*redis.Client).Options(); o.TLSConfig == nil || o.TLSConfig.ServerName != "h" {
				t.Fatalf("TLS config %+v", o.TLSConfig)
			}
		}, ""},
		{"host:port", "h:6379", false, func(t *testing.T, rdb redis.UniversalClient) {
			if o := rdb.(*redis.Client).Options(); o.Addr != "h:6379" || !o.ContextTimeoutEnabled {
				t.Fatalf("options %+v", o)
			}
		}, ""},
		{"node list", "a:1, b:2", false, func(t *testing.T, rdb redis.UniversalClient) {
			c, ok := rdb.(*redis.ClusterClient)
			if !ok {
				t.Fatalf("client %T, want *redis.ClusterClient", rdb)
			}
			if o := c.Options(); len(o.Addrs) != 2 || !o.ContextTimeoutEnabled {
				t.Fatalf("options %+v", o)
			}
		}, ""},
		{"cluster url options", "redis://h:1?addr=h:2&pool_size=9", true, func(t *testing.T, rdb redis.UniversalClient) {
			if o := rdb.(*redis.ClusterClient).Options(); len(o.Addrs) != 2 || o.PoolSize != 9 {
				t.Fatalf("options %+v", o)
			}
		}, ""},
		{"unknown option", "redis://h:1/0?pool_sise=3", false, nil, "unexpected option: pool_sise"},
		{"unknown cluster option", "redis://h:1?bogus=1", true, nil, "unexpected option: bogus"},
		{"empty list", " , ", false, nil, "no address in the list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target, err := ParseRedis(tt.spec, tt.cluster)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseRedis(%q): %v, want an error containing %q", tt.spec, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rdb := target.Client()
			defer rdb.Close()
			tt.check(t, rdb)
		})
	}
}

// FuzzParseRedis: any --redis value parses to exactly one of a single-node
// and a cluster target, or fails; a cluster comes from --redis-cluster or a
// list. And a password (any bytes, marked at both ends) in a URL built
// around it, which may or may not parse, shows in none of what is printed
// about the URL: the error text, secure.RedactURL of it (which the problem
// line quotes) and the target's description.
func FuzzParseRedis(f *testing.F) {
	f.Add("", "", "127.0.0.1:6379", false)
	f.Add("user", "s3cret", "h:6379/1", false)
	f.Add("", "pw", "h:1?addr=h2:2", true)
	f.Add("u", "", "a:1, b:2,", false)
	f.Add("u", "x", "h:1/0?unknown=1", false)
	f.Add("", "x", "[::1]:6379", false)
	f.Add("u", "pa/ss", "h:1", false)
	f.Add("u", "p?q#r%zz", "h:1", false)
	f.Add("", "", "[::1:6379?master_name=m&password=sentinel", false)
	f.Add("u", "p", "h:1?pool_size=-5", false)
	f.Add("u", "1/x", "h:1", true)
	f.Fuzz(func(t *testing.T, user, pw, rest string, cluster bool) {
		if rt, err := ParseRedis(rest, cluster); err != nil {
			if err.Error() == "" {
				t.Fatalf("%q: empty error", rest)
			}
		} else {
			if n := btoi(rt.Single != nil) + btoi(rt.ClusterOpts != nil) + btoi(rt.Failover != nil); n != 1 || rt.Cluster != (rt.ClusterOpts != nil) {
				t.Fatalf("%q: target %+v is not exactly one of single, cluster and sentinel", rest, rt)
			}
			if cluster && !rt.Cluster {
				t.Fatalf("%q with --redis-cluster: a single-node target", rest)
			}
			if rt.Desc == "" {
				t.Fatalf("%q: empty description", rest)
			}
		}
		const head, tail = "Zq7", "7qZ" // in no message: only the password can bring them
		if strings.Contains(user+rest, head) || strings.Contains(user+rest, tail) {
			return
		}
		spec := "redis://" + user + ":" + head + pw + tail + "@" + rest
		rt, err := ParseRedis(spec, cluster)
		printed := []string{secure.RedactURL(spec), rt.Desc}
		if err != nil {
			printed = append(printed, err.Error())
		}
		for _, p := range printed {
			if strings.Contains(p, head) || strings.Contains(p, tail) {
				t.Fatalf("%q: %q shows (part of) the password", spec, p)
			}
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestParseRedisSentinel: a URL with master_name is a Sentinel target whose
// sentinels are the URL's host and each addr, and whose description hides
// the password; Secure sets the master's ACL user on it.
func TestParseRedisSentinel(t *testing.T) {
	rt, err := ParseRedis("redis://:s3cret@h1:26379?master_name=m&addr=h2:26379", false)
	if err != nil {
		t.Fatal(err)
	}
	if o := rt.Failover; o == nil || rt.Single != nil || o.MasterName != "m" || len(o.SentinelAddrs) != 2 || strings.Contains(rt.Desc, "s3cret") {
		t.Fatalf("target %+v", rt)
	}
	if err := rt.Secure(secure.Redis{User: "ledger"}); err != nil || rt.Failover.Username != "ledger" {
		t.Fatalf("Secure: %v, user %q", err, rt.Failover.Username)
	}
}
