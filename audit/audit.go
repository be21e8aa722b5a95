// Package audit writes one JSON line per statement, with Apache Ranger's
// audit field names where they exist, so the lines can be shipped next to
// the JVM plugins' audits.
//
// Writing never blocks a query: records go through a bounded buffer to a
// writer goroutine, and a record that finds the buffer full is dropped and
// counted. Statement text is never written, only its fingerprint. A file
// output is reopened by Reopen (pgranger calls it on SIGHUP, after
// logrotate moved the file).
package audit

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Record is one audit event.
type Record struct {
	EvtTime        time.Time `json:"evtTime"`
	ReqUser        string    `json:"reqUser"`
	Repo           string    `json:"repo"`
	RepoType       int       `json:"repoType"`
	Resource       string    `json:"resource,omitempty"`
	ResType        string    `json:"resType,omitempty"`
	Access         string    `json:"access,omitempty"`
	Action         string    `json:"action"`
	Result         int       `json:"result"` // 1 allowed, 0 denied (Ranger's convention)
	Policy         int64     `json:"policy"`
	Enforcer       string    `json:"enforcer"`
	CliIP          string    `json:"cliIP,omitempty"`
	Agent          string    `json:"agent"`
	AgentHost      string    `json:"agentHost,omitempty"`
	SeqNum         int64     `json:"seq_num"`
	MaskPolicies   []int64   `json:"maskPolicies,omitempty"`
	FilterPolicies []int64   `json:"rowFilterPolicies,omitempty"`
	Fingerprint    string    `json:"fingerprint,omitempty"`
	Reason         string    `json:"reason,omitempty"`
	Database       string    `json:"cluster,omitempty"`
	// Who, beyond reqUser: the identity's roles (from the token or the
	// config, before RangerRoles membership is added), how the user logged in
	// ("scram-sha-256", "jwt") and, for a token, its "sub" and "jti" —
	// never the token itself.
	Roles      []string `json:"roles,omitempty"`
	AuthMethod string   `json:"authMethod,omitempty"`
	TokenSub   string   `json:"sub,omitempty"`
	TokenID    string   `json:"jti,omitempty"`
	// PolicyVersion is the policyVersion of the bundle that decided
	// (Ranger's policy_version); nil when no bundle was in force.
	PolicyVersion *int64 `json:"policy_version,omitempty"`
	// RowsAffected (the count of the statement's command tag: rows
	// returned, inserted, updated, …) and DurationMs (from the moment the
	// statement was checked, or the previous statement of the same text
	// completed, to its completion) are set on statements that ran; a
	// denial has neither. Failed marks a statement pgranger allowed that the
	// backend answered with an error.
	RowsAffected *int64   `json:"rowsAffected,omitempty"`
	DurationMs   *float64 `json:"durationMs,omitempty"`
	Failed       bool     `json:"failed,omitempty"`
	// Sent lists, for an authoring statement (GRANT, CREATE POLICY,
	// SECURITY LABEL FOR pgranger, …), the requests it sent to Ranger
	// Admin with their status, or the changes it made to the policy and
	// tag files; empty when it was refused before anything was sent.
	Sent []string `json:"sent,omitempty"`
}

// Logger writes records as JSON lines.
type Logger struct {
	ch   chan *Record
	host string
	seq  atomic.Int64
	done chan struct{}
	once sync.Once

	mu   sync.Mutex // guards out and w: the writer goroutine and Reopen
	out  io.WriteCloser
	w    *bufio.Writer
	path string // "" when built with New

	dropped, written, writeErrors atomic.Int64
}

// Open returns a Logger for path: "-" is stdout, anything else a file
// opened for appending. An empty path returns nil (auditing off).
func Open(path string, buffer int) (*Logger, error) {
	if path == "" {
		return nil, nil
	}
	out, err := openOutput(path)
	if err != nil {
		return nil, err
	}
	l := New(out, buffer)
	l.path = path
	return l, nil
}

func openOutput(path string) (io.WriteCloser, error) {
	if path == "-" {
		return nopCloser{os.Stdout}, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Reopen opens path again (after log rotation moved the old file away) or
// a new path, and swaps it in once the records already written are
// flushed to the old one. On an error the old output stays.
func (l *Logger) Reopen(path string) error {
	if l == nil {
		return nil
	}
	if path == "" {
		path = l.path
	}
	out, err := openOutput(path)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.w.Flush(); err != nil {
		l.writeErrors.Add(1)
	}
	old := l.out
	l.out, l.path = out, path
	l.w = bufio.NewWriter(out)
	return old.Close()
}

// New returns a Logger writing to out.
func New(out io.WriteCloser, buffer int) *Logger {
	if buffer <= 0 {
		buffer = 4096
	}
	host, _ := os.Hostname()
	l := &Logger{ch: make(chan *Record, buffer), out: out, w: bufio.NewWriter(out), host: host, done: make(chan struct{})}
	go l.writer()
	return l
}

// Log queues r; it never blocks. The logger fills SeqNum, AgentHost, Agent,
// Enforcer and RepoType when they are empty.
func (l *Logger) Log(r *Record) {
	if l == nil {
		return
	}
	r.SeqNum = l.seq.Add(1)
	if r.AgentHost == "" {
		r.AgentHost = l.host
	}
	if r.Agent == "" {
		r.Agent = "pgranger"
	}
	if r.Enforcer == "" {
		r.Enforcer = "ranger-acl"
	}
	if r.RepoType == 0 {
		r.RepoType = 3 // hive
	}
	select {
	case l.ch <- r:
	default:
		l.dropped.Add(1)
	}
}

// Stats are the logger's counters: records written, dropped because the
// buffer was full, and failed writes (disk full, closed pipe).
type Stats struct {
	Written, Dropped, WriteErrors int64
}

// Stats returns the counters (zero for a nil Logger).
func (l *Logger) Stats() Stats {
	if l == nil {
		return Stats{}
	}
	return Stats{Written: l.written.Load(), Dropped: l.dropped.Load(), WriteErrors: l.writeErrors.Load()}
}

// Dropped is the number of records lost to a full buffer.
func (l *Logger) Dropped() int64 { return l.dropped.Load() }

func (l *Logger) writer() {
	defer close(l.done)
	var line []byte
	for r := range l.ch {
		var err error
		line, err = appendJSON(line[:0], r)
		l.mu.Lock()
		if err == nil {
			_, err = l.w.Write(line)
		}
		if err == nil && len(l.ch) == 0 {
			err = l.w.Flush()
		}
		l.mu.Unlock()
		if err != nil {
			l.writeErrors.Add(1)
			continue
		}
		l.written.Add(1)
	}
	l.mu.Lock()
	l.w.Flush()
	l.mu.Unlock()
}

func appendJSON(buf []byte, r *Record) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return buf, err
	}
	return append(append(buf, b...), '\n'), nil
}

// Close flushes queued records and closes the output.
func (l *Logger) Close() {
	if l == nil {
		return
	}
	l.once.Do(func() {
		close(l.ch)
		<-l.done
		l.mu.Lock()
		l.out.Close()
		l.mu.Unlock()
	})
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
