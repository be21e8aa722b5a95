package audit

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

type buffer struct {
	mu sync.Mutex
	bytes.Buffer
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.Write(p)
}
func (b *buffer) Close() error { return nil }

func TestRecordsAreJSONLinesWithRangerNames(t *testing.T) {
	out := &buffer{}
	l := New(out, 10)
	l.Log(&Record{EvtTime: time.Unix(0, 0).UTC(), ReqUser: "bob", Repo: "hive", Resource: "sales/orders/ssn", ResType: "@column",
		Access: "select", Action: "SELECT", Result: 1, Policy: 10, MaskPolicies: []int64{10}, Fingerprint: "abc"})
	l.Close()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("want one line, got %q", out.String())
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &m); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"reqUser": "bob", "repo": "hive", "repoType": 3.0, "resource": "sales/orders/ssn",
		"resType": "@column", "access": "select", "action": "SELECT", "result": 1.0, "policy": 10.0, "enforcer": "ranger-acl",
		"agent": "pgranger", "seq_num": 1.0, "fingerprint": "abc", "evtTime": "1970-01-01T00:00:00Z"} {
		if m[k] != want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
}

// blockingWriter never returns, like a stuck disk.
type blockingWriter struct{ block chan struct{} }

func (w blockingWriter) Write(p []byte) (int, error) { <-w.block; return len(p), nil }
func (w blockingWriter) Close() error                { return nil }

func TestFullBufferDropsInsteadOfBlocking(t *testing.T) {
	w := blockingWriter{block: make(chan struct{})}
	l := New(w, 2)
	done := make(chan struct{})
	go func() {
		for i := 0; i < 100; i++ {
			l.Log(&Record{ReqUser: "bob"})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Log blocked on a stuck writer")
	}
	if l.Dropped() < 90 {
		t.Errorf("dropped %d, want most of 100", l.Dropped())
	}
	close(w.block)
	l.Close()
}

var _ io.WriteCloser = (*buffer)(nil)

// gateWriter holds the writer goroutine inside Write until released.
type gateWriter struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (b *gateWriter) Write(p []byte) (int, error) {
	b.once.Do(func() { close(b.entered) })
	<-b.release
	return len(p), nil
}
func (b *gateWriter) Close() error { return nil }

// A full buffer drops the record and counts it exactly.
func TestFullBufferDropsAndCounts(t *testing.T) {
	w := &gateWriter{entered: make(chan struct{}), release: make(chan struct{})}
	l := New(w, 1)
	// bufio only writes through once its buffer is full: a record larger
	// than bufio's 4 KiB buffer reaches Write at once.
	l.Log(&Record{ReqUser: strings.Repeat("u", 5000)})
	<-w.entered                    // the writer holds record 1
	l.Log(&Record{ReqUser: "two"}) // fills the buffer
	start := time.Now()
	l.Log(&Record{ReqUser: "three"}) // dropped
	l.Log(&Record{ReqUser: "four"})  // dropped
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("Log blocked for %s", d)
	}
	if got := l.Stats(); got.Dropped != 2 || got.Written != 0 {
		t.Errorf("stats while blocked = %+v, want 2 dropped, 0 written", got)
	}
	close(w.release)
	l.Close()
	if got := l.Stats(); got != (Stats{Written: 2, Dropped: 2}) {
		t.Errorf("stats after close = %+v, want 2 written, 2 dropped", got)
	}
}

// Reopen moves to a fresh file at the same path (logrotate's move and
// signal), losing nothing.
func TestReopenAfterRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	l, err := Open(path, 10)
	if err != nil {
		t.Fatal(err)
	}
	l.Log(&Record{ReqUser: "before"})
	waitWritten(t, l, 1)
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	l.Log(&Record{ReqUser: "between"}) // still goes to the moved file
	waitWritten(t, l, 2)
	if err := l.Reopen(""); err != nil {
		t.Fatal(err)
	}
	l.Log(&Record{ReqUser: "after"})
	l.Close()
	users := func(p string) string {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var r Record
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			out = append(out, r.ReqUser)
		}
		return strings.Join(out, ",")
	}
	if got := users(path + ".1"); got != "before,between" {
		t.Errorf("rotated file holds %s, want before,between", got)
	}
	if got := users(path); got != "after" {
		t.Errorf("new file holds %s, want after", got)
	}
}

func waitWritten(t *testing.T, l *Logger, n int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for l.Stats().Written < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d records written, want %d", l.Stats().Written, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
