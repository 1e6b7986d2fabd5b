package main

import (
	"bufio"
	"bytes"
	"encoding/json"
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
	rc := &recorder{w: bufio.NewWriter(&buf), release: make(chan struct{})}
	close(rc.release)
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
