package bench

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable prints the report as aligned text: one row per mode (median
// [min-max] of the rounds), the ratios against their targets, the latency.
func WriteTable(w io.Writer, r Report) error {
	fmt.Fprintf(w, "shardpipe bench: %d records of %d bytes in %d partitions (topic %s)\n", r.Records, valueSize, r.Partitions, r.Topic)
	fmt.Fprintf(w, "machine: %d cores, %s %s, %s, redis %s, load %s\n\n", r.Machine.Cores, r.Machine.GoVersion,
		r.Machine.OSArch, r.Machine.Kafka, r.Machine.Redis, r.Machine.LoadAvg)
	if r.CommitEvery > 0 {
		fmt.Fprintf(w, "NOT the defaults: modes d, e and f commit every %d records\n\n", r.CommitEvery)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "mode\trecords\trecords/s\tCPU s per 1M\tpeak RSS MB\tallocs/record\t")
	for _, m := range r.Modes {
		fmt.Fprintf(tw, "(%s) %s\t%d\t%s\t%s\t%s\t%s\t\n", m.Letter, m.Label, m.Records,
			stat(m.RecordsPerSec, "%.0f"), stat(m.CPUSecPerM, "%.1f"), stat(m.MaxRSSMB, "%.0f"), stat(m.AllocsPerRecord, "%.1f"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nmedian [min-max] of the rounds; records/s from the first record in to the last effect landed")
	if r.SQLRecords > 0 {
		fmt.Fprintf(w, "l to o: the first %d orders of the topic per round (n and o: a topic of them alone, --sql-records), into fresh tables\n", r.SQLRecords)
	}
	fmt.Fprintf(w, "\nratios (of medians)        value   target\n")
	for _, t := range ratioTargets(r.Ratios) {
		ratio(w, t)
	}
	fmt.Fprintf(w, "\ncosts (medians)            value   target\n")
	for _, t := range costTargets(r.Modes, r.Latency) {
		ratio(w, t)
	}
	writeRedisCPU(w, r.Modes)
	if l := r.Latency; l != nil {
		fmt.Fprintf(w, "\nlatency, record timestamp to effect landed, %d records/s offered for %.0fs, commit interval %s, %d rounds:\n",
			l.Rate, l.Seconds, l.CommitInterval, l.Rounds)
		fmt.Fprintf(w, "p50 %s ms   p99 %s ms (target <= 50 %s)   max %s ms\n", stat(l.P50ms, "%.1f"),
			stat(l.P99ms, "%.1f"), mark(l.P99ms.Median <= 50), stat(l.MaxMs, "%.1f"))
		fmt.Fprintf(w, "of which producing (timestamp to producer ack): p50 %s ms   p99 %s ms\n",
			stat(l.AckP50ms, "%.1f"), stat(l.AckP99ms, "%.1f"))
	}
	return nil
}

// ratio prints one figure against its target (none when its bound is 0);
// a figure whose modes were not measured is n/a.
func ratio(w io.Writer, t Target) {
	op := ">="
	if t.AtMost {
		op = "<="
	}
	switch {
	case t.Value == 0:
		fmt.Fprintf(w, "%-24s     n/a   (modes not measured)\n", t.Name)
	case t.Bound == 0:
		fmt.Fprintf(w, "%-24s  %6.2f\n", t.Name, t.Value)
	default:
		fmt.Fprintf(w, "%-24s  %6.2f   %s %-4g %s\n", t.Name, t.Value, op, t.Bound, mark(t.Met))
	}
}

func stat(s Stat, f string) string {
	return fmt.Sprintf(f+" ["+f+"-"+f+"]", s.Median, s.Min, s.Max)
}

func mark(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// writeRedisCPU prints, for the modes whose Redis time was read, what Redis's
// main thread spent per million records and how busy it was in the timed
// window: a mode whose Redis was busy near 1 was bound by Redis, and two such
// modes compare as Redis's speed in their rounds did.
func writeRedisCPU(w io.Writer, modes []ModeReport) {
	var rows []ModeReport
	for _, m := range modes {
		if m.RedisCPUSecPerM.Median > 0 {
			rows = append(rows, m)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\nRedis's main thread (INFO cpu over each round): CPU s per 1M records, busy share of the timed window\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, m := range rows {
		fmt.Fprintf(tw, "(%s) %s\t%s\t%s\t\n", m.Letter, m.Label, stat(m.RedisCPUSecPerM, "%.2f"), stat(m.RedisBusy, "%.2f"))
	}
	_ = tw.Flush()
}
