package integration_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/shardpipe/shardpipe/internal/harness/itest"
	"github.com/shardpipe/shardpipe/sink"
)

// BenchmarkDurableWait measures what a commit's durability wait costs on a
// private Valkey 9 with one replica: each op is one batch of 100 records
// through the ledger (pipelined SET NX GET EX, as run applies them) and,
// with a wait, the sink.Durable wait a commit makes (a fence SET and
// WAITAOF, pipelined), under appendfsync everysec and always (on the primary
// and the replica alike). It prints the table with ratios (with/without the
// wait, always/everysec). A replica under everysec acknowledges its fsync
// about once a second, so that row takes a second per op: run it with
//
//	go test -run '^$' -bench DurableWait -benchtime 50x ./integration/
func BenchmarkDurableWait(b *testing.B) {
	bin := itest.ValkeyBin(b)
	primary := itest.StartServer(b, bin)
	replica := itest.StartReplica(b, bin, primary)
	ctx := context.Background()
	ledger, err := sink.NewLedger(primary.C)
	if err != nil {
		b.Fatal(err)
	}
	type row struct{ fsync, wait string }
	waits := []struct {
		name     string
		local    bool
		replicas int
	}{{"none", false, 0}, {"local", true, 0}, {"local+1replica", true, 1}}
	perOp := map[row]time.Duration{}
	var batch int
	for _, fsync := range []string{"everysec", "always"} {
		for _, w := range waits {
			var d *sink.Durable
			if w.local || w.replicas > 0 {
				opts := []sink.DurableOpt{sink.WithReplicas(w.replicas)}
				if w.local {
					opts = append(opts, sink.WithLocalFsync())
				}
				if d, err = sink.NewDurable(primary.C, "bench:fence", opts...); err != nil {
					b.Fatal(err)
				}
			}
			b.Run("appendfsync="+fsync+"/wait="+w.name, func(b *testing.B) {
				primary.Config(ctx, "appendfsync", fsync)
				replica.Config(ctx, "appendfsync", fsync)
				recs := make([]sink.Record, 100)
				for b.Loop() {
					batch++
					for i := range recs {
						recs[i] = sink.Record{Topic: "bench", Offset: int64(batch*100 + i),
							Key: []byte("b" + strconv.Itoa(batch) + "-" + strconv.Itoa(i))}
					}
					if _, err := ledger.Apply(ctx, recs); err != nil {
						b.Fatal(err)
					}
					if d != nil {
						if err := d.Wait(ctx); err != nil {
							b.Fatal(err)
						}
					}
				}
				perOp[row{fsync, w.name}] = b.Elapsed() / time.Duration(b.N)
			})
		}
	}
	if len(perOp) < 6 {
		return // a -bench filter ran only some
	}
	fmt.Fprintf(os.Stdout, "\nDurableWait on Valkey 9 with one replica, same appendfsync on both (batch of 100 records + the commit's wait), per batch:\n")
	fmt.Fprintf(os.Stdout, "%-12s %-16s %12s %16s\n", "appendfsync", "wait", "per batch", "vs no wait")
	for _, fsync := range []string{"everysec", "always"} {
		base := perOp[row{fsync, "none"}]
		for _, w := range waits {
			v := perOp[row{fsync, w.name}]
			fmt.Fprintf(os.Stdout, "%-12s %-16s %12v %15.2fx\n", fsync, w.name, v.Round(time.Microsecond), float64(v)/float64(base))
		}
	}
	for _, w := range waits {
		fmt.Fprintf(os.Stdout, "always/everysec, wait=%s: %.2fx\n", w.name,
			float64(perOp[row{"always", w.name}])/float64(perOp[row{"everysec", w.name}]))
	}
}
