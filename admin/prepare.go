package admin

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/shardpipe/shardpipe/pipeline"
	"github.com/shardpipe/shardpipe/sink"
)

// Setup is what Prepare checks before a pipeline starts: the servers, the
// names the pipeline will use, and the ledger's settings.
type Setup struct {
	// Kafka is a client of the brokers, for the admin requests (the
	// program keeps it and closes it).
	Kafka *kgo.Client
	// Topics are the topics the pipeline consumes; Group its group.
	Topics []string
	Group  string
	// Redis is the ledger's Redis; RedisName how errors call it ("": its
	// address).
	Redis     redis.UniversalClient
	RedisName string
	// LedgerPrefix is the ledger's key prefix (sink.WithPrefix): the ACL
	// user must reach a key under it, and the manifest is kept per prefix.
	LedgerPrefix string
	// Keys are further keys the pipeline writes (a totals hash), which the
	// ACL user must reach.
	Keys []string
	// Own is the prefix of the program's own keys, apart from the ledger's
	// (the command's --dlq-prefix, "shardpipe:"): the manifest
	// (sink.ManifestKey), the commit marks (sink.NewCommitMarks) and, when
	// Durability.FenceKey is "", the barrier's fence key (Own + "fence").
	Own string
	// Manifest is what the ledger's claims stand for (the effect, totals
	// settings, key space); ReplaceManifest writes it over what is stored,
	// to change a ledger on purpose (CheckLedger).
	Manifest        sink.Manifest
	ReplaceManifest bool
	// DeadLetters checks that the dead-letter topic of every topic exists
	// (CheckDeadLetterTopics with DeadLetterTopic, "" for <topic>.dlq).
	DeadLetters     bool
	DeadLetterTopic string
	// Durability says what the Redis must promise and which risks are
	// accepted (CheckDurability).
	Durability DurabilityConfig
}

// Prepared is what Prepare found and the options the pipeline needs.
type Prepared struct {
	// Durability is CheckDurability's result: log its Risks.
	Durability Durability
	// Manifest is the ledger's manifest as stored; ManifestWritten says
	// Prepare wrote it (a new ledger, or ReplaceManifest).
	Manifest        sink.Manifest
	ManifestWritten bool
	// Options are to pass to pipeline.New with the program's own:
	// BeforeCommit with the durability barrier (when there is one to wait
	// for) and CountOnce with the commit marks under Setup.Own.
	Options []pipeline.GroupOpt
}

// Prepare is a program's one call before pipeline.New: it makes the
// checks `shardpipe run` makes, in its order, and stops at the first step
// that finds a problem, returning that step's errors as the check made
// them (joined when several, see Problems) and no options:
//
//  0. the Redis keys the pipeline writes are apart: the ledger prefix,
//     s.Keys and the program's own keys under s.Own do not collide, as
//     the command checks its flags, before asking any server
//     (CheckKeysApart: ErrKeysCollide);
//  1. the brokers answer, every topic exists, the Redis answers, runs
//     Redis 7.0+ and is no cluster node behind a single-node client
//     (Preflight);
//  2. the principal may describe the group and read the topics, and the
//     Redis ACL user reach a ledger key, the manifest and s.Keys
//     (CheckAccess);
//  3. with s.DeadLetters, the dead-letter topics exist
//     (CheckDeadLetterTopics);
//  4. the Redis keeps what the ledger needs: noeviction and some
//     persistence unless s.Durability accepts the risk, and the barrier
//     commits wait for (CheckDurability: ErrEviction, ErrNoPersistence);
//  5. last, so that a refusal before writes nothing, the ledger's manifest
//     records s.Manifest, or gets it when it has none (CheckLedger:
//     ErrLedgerMismatch).
//
// It costs the requests of those checks (a few round trips to each
// server), each bounded by ctx, and writes only the manifest.
func Prepare(ctx context.Context, s Setup) (Prepared, error) {
	var out Prepared
	if s.Kafka == nil || s.Redis == nil {
		return out, errors.New("admin: Prepare needs Setup.Kafka and Setup.Redis")
	}
	if err := CheckKeysApart(s.keys()); err != nil {
		return out, err
	}
	adm := kadm.NewClient(s.Kafka)
	if kErr, rErr := Preflight(ctx, adm, s.Topics, s.Redis, s.RedisName); kErr != nil || rErr != nil {
		return out, errors.Join(kErr, rErr)
	}
	// The manifest is among the keys asked for, as run asks: a user that
	// cannot reach it is refused here, as an access problem.
	manifest := sink.ManifestKey(s.Own, s.LedgerPrefix)
	acc := Access{Group: s.Group, Topics: s.Topics, Keys: append([]string{s.LedgerPrefix + "preflight-probe", manifest}, s.Keys...)}
	if err := CheckAccess(ctx, s.Kafka, acc, s.Redis, s.RedisName); err != nil {
		return out, err
	}
	if s.DeadLetters {
		if err := CheckDeadLetterTopics(ctx, adm, s.DeadLetterTopic, s.Topics); err != nil {
			return out, err
		}
	}
	dc := s.Durability
	if dc.Name == "" {
		dc.Name = s.RedisName
	}
	if dc.FenceKey == "" {
		dc.FenceKey = s.Own + "fence"
	}
	d, err := CheckDurability(ctx, s.Redis, dc)
	out.Durability = d
	if err != nil {
		return out, err
	}
	out.Manifest, out.ManifestWritten, err = CheckLedger(ctx, s.Redis, manifest, s.Manifest, s.ReplaceManifest)
	if err != nil {
		return out, err
	}
	if d.Barrier != nil {
		out.Options = append(out.Options, pipeline.BeforeCommit(d.Barrier))
	}
	out.Options = append(out.Options, pipeline.CountOnce(sink.NewCommitMarks(s.Redis, s.Own)))
	return out, nil
}

// keys are the Redis keys a pipeline of s writes, each named by its
// Setup field (CheckKeysApart).
func (s Setup) keys() []OwnedKey {
	ks := []OwnedKey{{Setting: "Setup.LedgerPrefix", Value: s.LedgerPrefix, What: "every ledger key", Key: s.LedgerPrefix, Prefix: true}}
	for i, k := range s.Keys {
		ks = append(ks, OwnedKey{Setting: fmt.Sprintf("Setup.Keys[%d]", i), Value: k, What: "a key the pipeline writes", Key: k})
	}
	return append(ks, OwnKeys("Setup.Own", s.Own, s.LedgerPrefix, s.Durability.FenceKey)...)
}
