package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestRecorder: each call is one JSON line with the decoded key, position
// and caller; a call made during a hold is received but not answered
// until the release.
func TestRecorder(t *testing.T) {
	var buf bytes.Buffer // read only once stats says every call is written
	rc := newRecorder(bufio.NewWriter(&buf), behaviour{})
	srv := httptest.NewServer(rc.routes())
	defer srv.Close()
	hc := &http.Client{Timeout: 30 * time.Second}
	send := func(key, offset string) (int, error) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/orders", strings.NewReader("{}"))
		req.Header.Set("Idempotency-Key", key)
		req.Header.Set("Shardpipe-Topic", "t")
		req.Header.Set("Shardpipe-Partition", "3")
		req.Header.Set("Shardpipe-Offset", offset)
		req.Header.Set("Shardpipe-Consumer", "host%201/42")
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	post := func(key, offset string) int {
		t.Helper()
		code, err := send(key, offset)
		if err != nil {
			t.Fatal(err)
		}
		return code
	}
	stats := func() (calls, held int) {
		resp, err := hc.Get(srv.URL + "/_control/stats")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var s struct{ Calls, Held int }
		if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
			t.Fatal(err)
		}
		return s.Calls, s.Held
	}
	control := func(what string) {
		resp, err := hc.Post(srv.URL+"/_control/"+what, "", nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %v %v", what, resp, err)
		}
		resp.Body.Close()
	}

	if code := post("order%2042", "41"); code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	if code := post("x", "not a number"); code != http.StatusBadRequest {
		t.Fatalf("a call without a position: status %d, want 400", code)
	}
	start := time.Now()
	for calls, _ := stats(); calls != 2; calls, _ = stats() { // a call is written just after its reply
		if time.Since(start) > 30*time.Second {
			t.Fatalf("%d calls recorded, want 2", calls)
		}
		time.Sleep(5 * time.Millisecond) // poll interval of a condition
	}
	control("hold")
	type reply struct {
		code int
		err  error
	}
	replied := make(chan reply, 1)
	go func() {
		code, err := send("order-7", "9")
		replied <- reply{code, err}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for _, held := stats(); held != 1; _, held = stats() {
		select {
		case r := <-replied:
			t.Fatalf("a held call replied before the release: %d %v", r.code, r.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the call did not arrive within 30s")
		}
		time.Sleep(5 * time.Millisecond) // poll interval of a condition
	}
	if calls, _ := stats(); calls != 2 {
		t.Fatalf("calls %d while one is held, want the 2 replied", calls)
	}
	control("release")
	if r := <-replied; r.err != nil || r.code != http.StatusOK {
		t.Fatalf("held call: status %d, %v", r.code, r.err)
	}
	for calls, _ := stats(); calls != 3; calls, _ = stats() { // the line is written just after the reply
		if time.Now().After(deadline) {
			t.Fatalf("%d calls recorded, want 3", calls)
		}
		time.Sleep(5 * time.Millisecond) // poll interval of a condition
	}

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), buf.String())
	}
	// Each line is written just after its reply, so two calls replied in
	// quick succession may be recorded in either order: find them by key.
	byKey := map[string]call{}
	for _, l := range lines {
		var c call
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		byKey[c.Key] = c
	}
	if c := byKey["x"]; c.Status != http.StatusBadRequest {
		t.Errorf("call without a position recorded as %+v, want status 400", c)
	}
	c := byKey["order 42"]
	if c.Key != "order 42" || c.Topic != "t" || c.Partition != 3 || c.Offset != 41 || c.Consumer != "host 1/42" ||
		c.Status != http.StatusOK || c.Replied.Before(c.Received) {
		t.Errorf("first call recorded as %+v", c)
	}
	held := byKey["order-7"]
	if held.Key != "order-7" || !held.Replied.After(held.Received) {
		t.Errorf("held call recorded as %+v, want order-7 replied after it was received", held)
	}
}

// TestBehaviour: the receiver answers as told (always 503, always 400, a
// first call failed for a fraction of the keys, a slow key's delay), and
// names the breaches of the per-record-key order in its stats; every call
// is listed by /_control/calls.
func TestBehaviour(t *testing.T) {
	var buf bytes.Buffer
	rc := newRecorder(bufio.NewWriter(&buf), behaviour{failRate: 1, slowDelay: 300 * time.Millisecond,
		fail: keySet("poison"), reject: keySet("bad, worse"), slow: keySet("slow")})
	srv := httptest.NewServer(rc.routes())
	defer srv.Close()
	hc := &http.Client{Timeout: 30 * time.Second}
	post := func(key, recordKey, offset string) int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/orders", strings.NewReader("{}"))
		req.Header.Set("Idempotency-Key", key)
		req.Header.Set("Kafka-Key", recordKey)
		req.Header.Set("Shardpipe-Topic", "t")
		req.Header.Set("Shardpipe-Partition", "0")
		req.Header.Set("Shardpipe-Offset", offset)
		req.Header.Set("Shardpipe-Consumer", "h/1")
		resp, err := hc.Do(req)
		if err != nil {
			t.Error(err)
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	get := func(path string, v any) {
		resp, err := hc.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		key, recordKey, offset string
		want                   int
	}{
		{"poison", "c1", "1", http.StatusServiceUnavailable},
		{"poison", "c1", "1", http.StatusServiceUnavailable},
		{"bad", "c2", "2", http.StatusBadRequest},
		{"worse", "c2", "3", http.StatusBadRequest},
		{"order-1", "c3", "4", http.StatusServiceUnavailable}, // -fail-rate 1: every first call
		{"order-1", "c3", "4", http.StatusOK},
		{"order-2", "c3", "3", http.StatusServiceUnavailable}, // and offset 3 after 4: a breach
	}
	for i, st := range steps {
		if got := post(st.key, st.recordKey, st.offset); got != st.want {
			t.Errorf("step %d: %s@%s answered %d, want %d", i, st.key, st.offset, got, st.want)
		}
	}
	slow := make(chan int, 1)
	go func() { slow <- post("slow", "c4", "10") }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var st stats
		get("/_control/stats", &st)
		if st.Held == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow call did not arrive within 30s")
		}
		time.Sleep(5 * time.Millisecond) // poll interval of a condition
	}
	post("order-3", "c4", "11") // while c4's call at 10 runs: a breach
	if code := <-slow; code != http.StatusServiceUnavailable {
		t.Errorf("slow call answered %d, want its first call's 503", code)
	}
	var st stats
	for get("/_control/stats", &st); st.Calls != 9 && time.Now().Before(deadline); get("/_control/stats", &st) {
		time.Sleep(5 * time.Millisecond) // a call is written just after its reply
	}
	if st.Calls != 9 || st.OKKeys != 1 || len(st.Problems) != 2 ||
		!strings.Contains(st.Problems[0], "offset 3 called after offset 4") ||
		!strings.Contains(st.Problems[1], "offset 11 called while an earlier call of its record key ran") {
		t.Errorf("stats %+v; want 9 calls, 1 key answered 2xx and the two breaches", st)
	}
	var calls []call
	get("/_control/calls", &calls)
	if len(calls) != 9 {
		t.Fatalf("%d calls listed, want 9", len(calls))
	}
	for _, c := range calls {
		if c.Key == "slow" && c.Replied.Sub(c.Received) < 300*time.Millisecond {
			t.Errorf("slow call replied after %v, want at least -slow-delay 300ms", c.Replied.Sub(c.Received))
		}
		if c.Key == "order-1" && c.RecordKey != "c3" {
			t.Errorf("call %+v: record key %q, want c3", c, c.RecordKey)
		}
	}
}

// TestHashFraction: -fail-rate picks about that fraction of the keys.
func TestHashFraction(t *testing.T) {
	const n, rate = 10000, 0.1
	failed := 0
	for i := range n {
		if hashFraction(fmt.Sprintf("order-%d", i)) < rate {
			failed++
		}
	}
	if failed < n*rate*0.8 || failed > n*rate*1.2 {
		t.Errorf("%d of %d keys below %v, want about %v", failed, n, rate, n*rate)
	}
}
