// Package bench measures shardpipe against its ceilings on real Kafka and
// Redis: the consume ceiling (franz-go alone), the sink ceiling (pipelined
// SET NX EX alone), the scripted sink ceiling (the ledger with the totals
// effect, its batch script alone, no Kafka), a naive per-record consumer, and the pipeline
// in record mode, with the totals effect and replaying a fully claimed
// range. Each
// mode runs in a child process (RunWorker) so the parent can read its CPU
// time and peak RSS from the operating system; Run drives the rounds and
// Report prints the table, the ratios and the latency histogram.
package bench
