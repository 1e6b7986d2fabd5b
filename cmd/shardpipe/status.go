package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/admin"
)

const fJSON = "json"

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show a group's committed offsets, last stable and log-end offsets, lag and owners per partition",
		UsageText: `shardpipe status --group shardpipe [--topic orders] [--json]

Examples:
   shardpipe status --brokers kafka:9092 --group shardpipe --topic orders
   shardpipe status --group shardpipe --json | jq .lag`,
		Description: "Lag is the last stable offset minus the committed offset (minus the log start when nothing\n" +
			"is committed). The last stable offset is the end a read_committed consumer such as run reaches: the\n" +
			"log end (high watermark), or the first record of a transaction still open. Classic groups: the owner comes from DescribeGroups, which does not report the\n" +
			"generation. Consumer-protocol (KIP-848) groups: owner and member epochs come from\n" +
			"ConsumerGroupDescribe. Without --topic, the topics the group has committed offsets for.\n" +
			"Exits 3 when the group or a topic does not exist.",
		Flags: []cli.Flag{
			brokersFlag(),
			&cli.StringSliceFlag{Name: fTopic, Sources: fromEnv(fTopic),
				Usage: "topic to show; repeat or separate with commas (default: every topic the group committed)"},
			groupFlag(),
			&cli.BoolFlag{Name: fJSON, Sources: fromEnv(fJSON), Usage: "print JSON instead of a table"},
			connectTimeoutFlag(),
		},
		Action: statusAction,
	}
}

func statusAction(ctx context.Context, c *cli.Command) error {
	var bad problems
	brokers := brokerList(&bad, c.StringSlice(fBrokers))
	kopts := kafkaSecurity(c, &bad)
	topics := splitList(c.StringSlice(fTopic))
	for _, t := range topics {
		if msg := topicProblem(t); msg != "" {
			bad.addf("%s %q: %s", flagRef(fTopic), t, msg)
		}
	}
	group := strings.TrimSpace(c.String(fGroup))
	if group == "" {
		bad.addf("%s: empty; name the consumer group", flagRef(fGroup))
	}
	timeout := positive(&bad, c, fConnectTimeout)
	if len(bad) > 0 {
		return usageErr(bad...)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	st, err := describe(ctx, brokers, kopts, group, topics, timeout)
	if err != nil {
		return err
	}
	if c.Bool(fJSON) {
		b, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			return failure(fmt.Errorf("status as JSON: %w", err))
		}
		if _, err := fmt.Fprintf(c.Root().Writer, "%s\n", b); err != nil {
			return failure(fmt.Errorf("write status: %w", err))
		}
		return nil
	}
	if err := printStatus(c.Root().Writer, st); err != nil {
		return failure(fmt.Errorf("write status: %w", err))
	}
	return nil
}

// describe gathers the group's status (admin.DescribeGroup).
func describe(ctx context.Context, brokers []string, kopts []kgo.Opt, group string, topics []string, timeout time.Duration) (admin.GroupStatus, error) {
	cl, err := adminClient(brokers, kopts...)
	if err != nil {
		return admin.GroupStatus{Group: group}, failure(err)
	}
	defer cl.Close()
	st, err := admin.DescribeGroup(ctx, kadm.NewClient(cl), group, topics...)
	if errors.Is(err, admin.ErrGroupMissing) || errors.Is(err, admin.ErrTopicMissing) {
		var lines []string
		for _, e := range leaves(err) {
			lines = append(lines, e.Error())
		}
		return st, unavailableErr(lines...)
	}
	if err != nil {
		return st, exitFor(err, brokers, timeout)
	}
	return st, nil
}

// printStatus writes st as a header and a table, and returns the first
// write error.
func printStatus(out io.Writer, st admin.GroupStatus) error {
	w := &stickyWriter{w: out}
	epoch := "n/a (classic groups do not report their generation)"
	if st.Epoch != nil {
		epoch = fmt.Sprint(*st.Epoch)
	}
	fmt.Fprintf(w, "group %s  type %s  state %s  epoch %s  members %d  lag %d\n",
		st.Group, st.Type, st.State, epoch, len(st.Members), st.Lag)
	for _, m := range st.Members {
		if m.Epoch != nil {
			fmt.Fprintf(w, "  member %s  client %s  host %s  member-epoch %d\n", m.ID, m.ClientID, m.Host, *m.Epoch)
		} else {
			fmt.Fprintf(w, "  member %s  client %s  host %s\n", m.ID, m.ClientID, m.Host)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tCOMMITTED\tLAST-STABLE\tLOG-END\tLAG\tMEMBER")
	for _, p := range st.Partitions {
		committed, member := fmt.Sprint(p.Committed), p.Member
		if p.Committed < 0 {
			committed = "-"
		}
		if member == "" {
			member = "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t%s\n", p.Topic, p.Partition, committed, p.LastStable, p.LogEnd, p.Lag, member)
	}
	_ = tw.Flush()
	return w.err
}

// stickyWriter keeps the first write error and drops every write after it.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	s.err = err
	return n, err
}
