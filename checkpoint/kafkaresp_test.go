package checkpoint

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestResponseTopic: an OffsetCommit v10+ answer names topics by ID only
// when franz-go did not fill the names in (the member's generation changed
// while the commit was in flight); the name then comes from the request, so
// the partition's refusal reaches its caller.
func TestResponseTopic(t *testing.T) {
	req := kmsg.NewPtrOffsetCommitRequest()
	for _, x := range []struct {
		name string
		id   byte
	}{{"orders", 1}, {"payments", 2}} {
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic, rt.TopicID = x.name, [16]byte{x.id}
		req.Topics = append(req.Topics, rt)
	}
	for _, tc := range []struct {
		topic string
		id    byte
		want  string
	}{
		{"orders", 0, "orders"},     // v9 and below, or filled in by franz-go
		{"", 2, "payments"},         // v10+, left as the broker sent it
		{"", 9, ""},                 // an ID the request did not carry
		{"payments", 1, "payments"}, // a name, when given, is kept
	} {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = tc.topic, [16]byte{tc.id}
		if got := responseTopic(req, rt); got != tc.want {
			t.Errorf("responseTopic(topic %q, id %d) = %q, want %q", tc.topic, tc.id, got, tc.want)
		}
	}
}
