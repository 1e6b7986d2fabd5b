package admin_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/admin"
	"github.com/shardpipe/shardpipe/checkpoint"
	"github.com/shardpipe/shardpipe/integration"
	"github.com/shardpipe/shardpipe/internal/watch"
	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// TestPrepareRefuses runs Prepare on the real servers: a Setup without
// its clients is an error, not a panic; a missing topic
// (ErrTopicMissing) and a ledger whose manifest records another effect
// (ErrLedgerMismatch) and an ACL user that reaches the ledger but not the
// manifest's key (ErrUnreachable, at the access check, before anything is
// read) are refused with no options to start a pipeline with, and the
// refusal writes no manifest and leaves a stored one as it was.
func TestPrepareRefuses(t *testing.T) {
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	topic := integration.CreateTopic(t, brokers, 1)
	cl := integration.NewKafkaClient(t, brokers)
	rdb := integration.NewRedisClient(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if got, err := admin.Prepare(ctx, admin.Setup{Topics: []string{topic}}); err == nil || len(got.Options) != 0 {
		t.Fatalf("Prepare without clients = %d options, %v; want an error naming what is missing", len(got.Options), err)
	}
	totals := sink.Manifest{Effect: "totals", TotalsHash: "h", TotalsGroupField: "customer", TotalsAmountField: "amount_cents", KeySpace: "shared"}
	none := sink.Manifest{Effect: "none", KeySpace: "shared"}
	for _, tc := range []struct {
		name   string
		topics []string
		stored *sink.Manifest // written before Prepare; nil: none
		acl    bool           // Prepare as a user whose keys are the ledger's and the fence's only
		want   error
	}{
		{"missing topic", []string{topic, topic + "-missing"}, nil, false, admin.ErrTopicMissing},
		{"manifest of another effect", []string{topic}, &totals, false, admin.ErrLedgerMismatch},
		{"manifest out of the user's reach", []string{topic}, nil, true, admin.ErrUnreachable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			own := integration.RedisPrefix(t, rdb)
			key := sink.ManifestKey(own, own+"ledger:")
			if tc.stored != nil {
				if _, err := sink.WriteManifest(ctx, rdb, key, *tc.stored, false); err != nil {
					t.Fatal(err)
				}
			}
			client := redis.UniversalClient(rdb)
			if tc.acl {
				client = aclUser(t, addr, "~"+own+"ledger:*", "~"+own+"fence*")
			}
			got, err := admin.Prepare(ctx, admin.Setup{Kafka: cl, Topics: tc.topics, Group: integration.Group(t), Redis: client,
				LedgerPrefix: own + "ledger:", Own: own, Manifest: none})
			if !errors.Is(err, tc.want) || len(got.Options) != 0 {
				t.Fatalf("Prepare = %d options, %v; want no options and %v", len(got.Options), err, tc.want)
			}
			if tc.acl && !strings.Contains(err.Error(), key) {
				t.Errorf("Prepare = %v; want the refusal to name the manifest's key %s", err, key)
			}
			m, ok, err := sink.ReadManifest(ctx, rdb, key)
			if err != nil {
				t.Fatal(err)
			}
			if tc.stored == nil && ok || tc.stored != nil && (!ok || m.Effect != tc.stored.Effect) {
				t.Fatalf("after the refusal the manifest is %+v (stored %v), want it as before: %v", m, ok, tc.stored)
			}
		})
	}
}

// TestPrepareReady: on the real servers (noeviction, appendonly yes),
// Prepare writes a new ledger's manifest and returns the commit marks and,
// when the Redis has a wait to make (WAITAOF, replicas), the durability
// barrier as options; a pipeline started with them raises the group's
// commit mark before it commits.
func TestPrepareReady(t *testing.T) {
	brokers, addr := integration.Kafka(t), integration.Redis(t)
	topic := integration.CreateTopic(t, brokers, 1)
	group := integration.Group(t)
	cl := integration.NewKafkaClient(t, brokers)
	rdb := integration.NewRedisClient(t, addr)
	own := integration.RedisPrefix(t, rdb)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ready, err := admin.Prepare(ctx, admin.Setup{Kafka: cl, Topics: []string{topic}, Group: group, Redis: rdb,
		LedgerPrefix: own + "ledger:", Own: own, Manifest: sink.Manifest{Effect: "none", KeySpace: "shared"}})
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	want := 1 // CountOnce
	if ready.Durability.Barrier != nil {
		want++ // BeforeCommit
	}
	if !ready.ManifestWritten || (ready.Durability.Barrier == nil) != (ready.Durability.Wait == "none") || len(ready.Options) != want {
		t.Fatalf("Prepare = written %v, barrier %v (wait %s), %d options; want the manifest written and %d options",
			ready.ManifestWritten, ready.Durability.Barrier, ready.Durability.Wait, len(ready.Options), want)
	}
	const records = 5
	for i := range records {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "order-%d", i), Value: []byte("{}")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	ledger, err := sink.NewLedger(rdb, sink.WithPrefix(own+"ledger:"))
	if err != nil {
		t.Fatal(err)
	}
	log := watch.New()
	p, err := pipeline.New(append(ready.Options, pipeline.Brokers(brokers...), pipeline.Topics(topic), pipeline.Group(group),
		pipeline.Sink(ledger), pipeline.CommitEvery(records), pipeline.Logger(slog.New(slog.DiscardHandler)),
		pipeline.Observe(log.Observer("p")))...)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	part := checkpoint.Partition{Topic: topic, Partition: 0}
	if err := log.Wait(ctx, "a commit past every record", func(evs []watch.Tagged) bool {
		return watch.Committed(evs, "p")[part] == records
	}); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mark, err := sink.NewCommitMarks(rdb, own).Highest(ctx, group, topic, 0)
	if err != nil || mark != records {
		t.Fatalf("commit mark %d, %v; want %d (CountOnce raised it before the commit)", mark, err, records)
	}
}

// aclUser is a client of the Redis at addr logged in as a new ACL user that
// may run every command on the keys patterns match, and no other key.
func aclUser(t *testing.T, addr string, patterns ...string) *redis.Client {
	t.Helper()
	root := integration.NewRedisClient(t, addr)
	user := "sp-prepare-" + integration.Group(t)
	args := append([]any{"ACL", "SETUSER", user, "on", ">pw", "+@all"}, func() []any {
		out := make([]any, len(patterns))
		for i, p := range patterns {
			out[i] = p
		}
		return out
	}()...)
	if err := root.Do(context.Background(), args...).Err(); err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	t.Cleanup(func() { _ = root.Do(context.Background(), "ACL", "DELUSER", user).Err() })
	c := redis.NewClient(&redis.Options{Addr: addr, Username: user, Password: "pw"})
	t.Cleanup(func() { _ = c.Close() })
	return c
}
