package sink

import (
	"encoding/json"
	"testing"
	"time"
)

func TestAppendClaimMatchesEncodingJSON(t *testing.T) {
	at := time.Date(2026, 11, 30, 5, 6, 7, 891011000, time.UTC)
	cases := []Claim{
		{Topic: "orders", Partition: 3, Offset: 12345, Epoch: 7, Member: "kgo-1b2c", At: at, State: ClaimApplied},
		{Topic: "orders", Partition: 3, Offset: 12345, Epoch: 7, Member: "kgo-1b2c", Group: "shardpipe", At: at, State: ClaimApplied},
		{Topic: "orders", Group: "g<\"", At: at, State: ClaimApplied},
		{Topic: "orders", Partition: 0, Offset: 0, Epoch: 0, At: at, State: ClaimPending, Owner: "tok-1"},
		{Topic: "t<&>", Partition: -1, Offset: -5, Epoch: -1, Member: "m\"\\\n\u00e9\u2028", At: at.Add(-at.Sub(time.Time{})), State: ClaimDone},
		{Topic: "", At: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("x", 3600)), State: "s\x7f"},
		{Topic: "ünïcode", Member: "\xff", At: time.Unix(0, 0), State: ClaimApplied},
		{Topic: "orders", Partition: 3, Offset: 12345, Epoch: 7, Member: "kgo-1b2c", Group: "g", At: at, State: ClaimApplied,
			Trace: "4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7"},
	}
	for _, c := range cases {
		want, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendClaim(nil, c)
		if !ok || string(got) != string(want) {
			t.Errorf("appendClaim(%+v)\n got %s (ok %v)\nwant %s", c, got, ok, want)
		}
	}
	if _, ok := appendClaim(nil, Claim{At: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}); ok {
		t.Error("year 10000: want refused, as encoding/json refuses it")
	}
}

// classifyPrior must agree with DecodeClaim and Names/SameRecord for every
// claim shardpipe writes and for values of other shapes.
func TestClassifyPriorAgreesWithDecode(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	r := Record{Topic: "orders", Partition: 2, Offset: 10, Epoch: 3, Member: "m-1"}
	variants := []Record{r,
		{Topic: "orders", Partition: 2, Offset: 10, Epoch: 3, Member: "m-1", Group: "g"},
		{Topic: "orders", Partition: 2, Offset: 10, Epoch: 4, Member: "m-2", Group: "g"},
		{Topic: "orders", Partition: 2, Offset: 10, Epoch: 4, Member: "m-2", Group: "h"},
		{Topic: "orders", Partition: 2, Offset: 10, Epoch: 4, Group: "g"},
		{Topic: "orders", Partition: 2, Offset: 10, Epoch: 3},
		{Topic: "orders", Partition: 2, Offset: 10, Epoch: 4, Member: "m-1"},
		{Topic: "orders", Partition: 2, Offset: 1, Epoch: 3, Member: "m-1"},
		{Topic: "orders", Partition: 12, Offset: 10, Epoch: 3, Member: "m-1"},
		{Topic: "orders<", Partition: 2, Offset: 10, Epoch: 3, Member: "m-1"},
		{Topic: "orders", Partition: 0, Offset: 0, Epoch: 0},
	}
	var priors []string
	for _, v := range variants {
		priors = append(priors, claimFor(&v, ClaimApplied, at).Encode(), claimFor(&v, ClaimDone, at).Encode())
		traced := claimFor(&v, ClaimApplied, at)
		traced.Trace = "4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7"
		priors = append(priors, traced.Encode())
		other := v
		other.Epoch, other.Member = 77, "later"
		priors = append(priors, claimFor(&other, ClaimApplied, at).Encode())
	}
	priors = append(priors, "", "not json", `{"topic":"orders"}`, `{"state":"applied"}`,
		`{"topic":"orders","partition":2,"offset":10,"epoch":3,"member":"m-1","at":"2026-01-02T03:04:05Z"}`,
		`{"topic":"orders","partition":2,"offset":10,"epoch":3,"member":"m-1","at":"2026-01-02T03:04:05Z","state":"applied"}`,
		`{"topic":"orders","partition":0,"offset":-0,"epoch":0,"at":"2026-01-02T03:04:05Z","state":"applied"}`,
		`{"topic":"orders","partition":0,"offset":0,"epoch":0,"member":"","at":"2026-01-02T03:04:05Z","state":"applied"}`,
		`{"partition":2,"topic":"orders","offset":10,"epoch":3,"member":"m-1","at":"2026-01-02T03:04:05Z","state":"applied"}`,
		`{"topic":"orders","partition":02,"offset":10,"epoch":3,"member":"m-1","at":"2026-01-02T03:04:05Z","state":"applied"}`,
		`{"topic":"orders","partition":2,"offset":10,"epoch":3,"member":"m-1","at":"2026-01-02T03:04:05Z","state":"bogus"}`,
		`{"topic":"orders","partition":2,"offset":10,"epoch":3,"member":"m-1","at":"2026-01-02T03:04:05Z","state":"applied","owner":"x"}`,
		`{"topic":"orders","partition":2,"offset":10,"epoch":3,"member":"m-1","at":"2026-01-02T03:04:05Z","state":"applied"} `,
		`{"topic":"orders","partition":2,"offset":10,"epoch":3,"member":"m-1","at":"","state":"applied"}`,
		`{"topic":"orders","partition":2,"offset":10,"epoch":3,"member":"m-1","group":"","at":"2026-01-02T03:04:05Z","state":"applied"}`,
		`{"topic":"orders","partition":2,"offset":10,"epoch":3,"group":"g","member":"m-1","at":"2026-01-02T03:04:05Z","state":"applied"}`,
		`{"topic":"orders","partition":2,"offset":10,"epoch":9,"group":"g","at":"2026-01-02T03:04:05Z","state":"applied"}`,
		`{"topic":"orders","partition":2,"offset":10,"epoch":9,"member":"x","group":"g","at":"2026-01-02T03:04:05Z","state":"applied"}`,
		`{"topic":"orders","partition":2,"offset":10,"epoch":3,"member":"m-1","at":"2026-01-02T03:04:05Z","state":"applied","trace":"a-b"}`,
		`{"topic":"orders","partition":2,"offset":10,"epoch":3,"member":"m-1","at":"2026-01-02T03:04:05Z","state":"applied","trace":"a\"b"}`,
		`{"topic":"orders","partition":2,"offset":10,"epoch":3,"member":"m-1","at":"2026-01-02T03:04:05Z","state":"applied","trace":"a-b","owner":"x"}`,
		`{"topic":"orders","partition":2,"offset":10,"epoch":3,"member":"m-1","at":"2026-01-02T03:04:05Z","state":"applied","trace":1}`)
	var scratch []byte
	for _, v := range variants {
		for _, p := range priors {
			c, err := DecodeClaim(p)
			want := priorOther
			switch {
			case err != nil || c.State != ClaimApplied || c.Owner != "":
				want = priorForeign
			case c.Names(&v):
				want = priorOwn
			case c.SameRecord(&v):
				want = priorSameRecord
			}
			if got := classifyPrior(p, &v, &scratch); got != want {
				t.Errorf("classifyPrior(%q, %+v) = %v, DecodeClaim says %v", p, v, got, want)
			}
		}
	}
}

// TestClassifyPriorAllocs: recognising the claim a replay finds costs no
// allocation (a replay classifies one per record; comparing it with the
// record's own claim prefix once copied both prefixes into strings).
func TestClassifyPriorAllocs(t *testing.T) {
	r := Record{Topic: "orders", Partition: 3, Offset: 41, Epoch: 2, Member: "kgo-0a1b2c3d-4e5f-6789-abcd-ef0123456789", Group: "g"}
	old := r
	old.Epoch, old.Member = 1, "kgo-earlier-member"
	prior := claimFor(&old, ClaimApplied, time.Now()).Encode()
	scratch := make([]byte, 0, 256)
	allocs := testing.AllocsPerRun(100, func() {
		if classifyPrior(prior, &r, &scratch) != priorSameRecord {
			t.Fatal("an earlier term's claim for the same record not recognised")
		}
	})
	if allocs != 0 {
		t.Errorf("classifyPrior allocates %.0f times per call, want 0", allocs)
	}
}
