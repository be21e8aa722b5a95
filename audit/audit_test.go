package audit

import (
	"bytes"
	"encoding/json"
	"io"
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
