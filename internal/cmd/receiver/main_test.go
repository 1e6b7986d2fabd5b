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
	post := func(key, offset string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/orders", strings.NewReader("{}"))
		req.Header.Set("Idempotency-Key", key)
		req.Header.Set("Shardpipe-Topic", "t")
		req.Header.Set("Shardpipe-Partition", "3")
		req.Header.Set("Shardpipe-Offset", offset)
		req.Header.Set("Shardpipe-Consumer", "host%201/42")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	stats := func() (calls, held int) {
		resp, err := http.Get(srv.URL + "/_control/stats")
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
		resp, err := http.Post(srv.URL+"/_control/"+what, "", nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %v %v", what, resp, err)
		}
		resp.Body.Close()
	}

	if resp := post("order%2042", "41"); resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if resp := post("x", "not a number"); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a call without a position: status %d, want 400", resp.StatusCode)
	}
	control("hold")
	replied := make(chan int, 1)
	go func() { replied <- post("order-7", "9").StatusCode }()
	for _, held := stats(); held != 1; _, held = stats() {
		time.Sleep(5 * time.Millisecond) // poll interval of a condition
	}
	select {
	case <-replied:
		t.Fatal("a held call replied before the release")
	default:
	}
	if calls, _ := stats(); calls != 2 {
		t.Fatalf("calls %d while one is held, want the 2 replied", calls)
	}
	control("release")
	if code := <-replied; code != http.StatusOK {
		t.Fatalf("held call: status %d", code)
	}
	for calls, _ := stats(); calls != 3; calls, _ = stats() { // the line is written just after the reply
		time.Sleep(5 * time.Millisecond) // poll interval of a condition
	}

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), buf.String())
	}
	var c call
	if err := json.Unmarshal([]byte(lines[0]), &c); err != nil {
		t.Fatal(err)
	}
	if c.Key != "order 42" || c.Topic != "t" || c.Partition != 3 || c.Offset != 41 || c.Consumer != "host 1/42" ||
		c.Status != http.StatusOK || c.Replied.Before(c.Received) {
		t.Errorf("first call recorded as %+v", c)
	}
	var held call
	if err := json.Unmarshal([]byte(lines[2]), &held); err != nil {
		t.Fatal(err)
	}
	if held.Key != "order-7" || !held.Replied.After(held.Received) {
		t.Errorf("held call recorded as %+v, want order-7 replied after it was received", held)
	}
}
