package settings

import (
	"os"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/cliflags"
	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
)

// FlagPartitionIDs is the list of partitions replay and reset-offsets work
// on; their messages name it.
const FlagPartitionIDs = "partition-ids"

// PartitionsGroup is --partition-ids, a list of partitions (replay and
// reset-offsets), loaded into ps (nil: all); usage says what they are for.
// It refuses SHARDPIPE_PARTITIONS, which is produce's partition count and
// was this list's variable once: read as a list, a count of 2 would
// silently limit a recovery to partition 2.
func PartitionsGroup(ps *[]int32, usage string) cliflags.Group {
	return cliflags.NewGroup(func(c *cli.Command, bad *cliflags.Problems) {
		if v := os.Getenv(Env.Name(FlagPartitions)); v != "" {
			bad.Addf("%s=%q is set: it is the partition count of produce and bench, not partitions to work on; name those with %s, and unset %s",
				Env.Name(FlagPartitions), v, ref(FlagPartitionIDs), Env.Name(FlagPartitions))
		}
		s := c.String(FlagPartitionIDs)
		var msgs []string
		if *ps, msgs = flagcheck.Partitions(s); len(msgs) > 0 {
			for _, m := range msgs {
				bad.Addf("%s %q: %s", ref(FlagPartitionIDs), s, m)
			}
		}
	}, &cli.StringFlag{Name: FlagPartitionIDs, Usage: usage})
}
