package httpeffect

import (
	"net/http"
	"strings"

	"github.com/shardpipe/shardpipe/sink"
)

// kafkaHeaders adds each Kafka header of hs to h as Kafka-Header-NAME,
// repeats of one name as repeats of one header. HTTP header names are
// case-insensitive, so names that differ only in case would merge: the
// first of them (in record order) goes as headerName encodes it, each
// later one with all its letters percent-encoded (caseVariantName), so
// that every distinct name arrives as a header of its own. No two
// encodings collide: a variant's has no letter left where the first's has
// one. It allocates a map only for a record with two headers or more.
func kafkaHeaders(h http.Header, hs []sink.Header) {
	var first map[string]string // lower-cased encoded name -> the Kafka name first sent under it
	if len(hs) > 1 {
		first = make(map[string]string, len(hs))
	}
	for _, kh := range hs {
		name := headerName(kh.Key)
		if first != nil {
			fold := strings.ToLower(name)
			if f, seen := first[fold]; !seen {
				first[fold] = kh.Key
			} else if f != kh.Key {
				name = caseVariantName(kh.Key)
			}
		}
		h.Add(HeaderKafkaPrefix+name, headerValue(kh.Value))
	}
}
