// Package httpeffect is an external effect for guard mode: an HTTP POST of
// each record's value to one URL, with the business key as its
// Idempotency-Key. Wrap it with pipeline.Guarded around a sink.Guard: the
// guard claims the key, the effect calls, the guard marks the key done.
//
//	eff, err := httpeffect.New("https://payments.example/charges", httpeffect.Timeout(5*time.Second))
//	applier := pipeline.Guarded(guard, eff.Do)
//
// What the receiver gets, per call: the value as the body
// (application/octet-stream) and the headers Idempotency-Key (the business
// key), Kafka-Key (the record key, absent when it has none),
// Kafka-Header-NAME (each Kafka header), Shardpipe-Topic,
// Shardpipe-Partition, Shardpipe-Offset, Shardpipe-Epoch (the fencing epoch
// of the assignment), Shardpipe-Member (the group member ID) and
// Shardpipe-Consumer (host/pid of the caller). Values, and header names
// after Kafka-Header-, are percent-encoded where HTTP would refuse or
// mangle them (url.PathUnescape gives them back); a Kafka header name that
// differs only in case from an earlier one has every letter encoded too,
// so that HTTP, which keeps no case, does not merge the two. A 2xx reply is success;
// any other status, a network error or the timeout is an error, and the
// pipeline applies the batch again. No redirect is followed: a 3xx is such
// an error, naming the Location without its password and query values.
//
// Guarantee, and its limit: the guard runs the call at most once per key
// while the call's outcome is known; a crash after the call and before the
// done mark can make the call run again. The receiver closes that window by
// deduplicating on Idempotency-Key.
//
// Imports: sink (for sink.Record), secure (RedactURL: errors never show
// the URL's password or query values) and the standard library.
package httpeffect
