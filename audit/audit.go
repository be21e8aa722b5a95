// Package audit writes one JSON line per statement, with Apache Ranger's
// audit field names where they exist, so the lines can be shipped next to
// the JVM plugins' audits.
//
// Writing never blocks a query: records go through a bounded buffer to a
// writer goroutine, and a record that finds the buffer full is dropped and
// counted. Statement text is never written, only its fingerprint.
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
}

// Logger writes records as JSON lines.
type Logger struct {
	ch      chan *Record
	out     io.WriteCloser
	host    string
	seq     atomic.Int64
	dropped atomic.Int64
	done    chan struct{}
	once    sync.Once
}

// Open returns a Logger for path: "-" is stdout, anything else a file
// opened for appending. An empty path returns nil (auditing off).
func Open(path string, buffer int) (*Logger, error) {
	if path == "" {
		return nil, nil
	}
	var out io.WriteCloser = nopCloser{os.Stdout}
	if path != "-" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
		if err != nil {
			return nil, err
		}
		out = f
	}
	return New(out, buffer), nil
}

// New returns a Logger writing to out.
func New(out io.WriteCloser, buffer int) *Logger {
	if buffer <= 0 {
		buffer = 4096
	}
	host, _ := os.Hostname()
	l := &Logger{ch: make(chan *Record, buffer), out: out, host: host, done: make(chan struct{})}
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

// Dropped is the number of records lost to a full buffer.
func (l *Logger) Dropped() int64 { return l.dropped.Load() }

func (l *Logger) writer() {
	defer close(l.done)
	w := bufio.NewWriter(l.out)
	enc := json.NewEncoder(w)
	for r := range l.ch {
		enc.Encode(r)
		if len(l.ch) == 0 {
			w.Flush()
		}
	}
	w.Flush()
}

// Close flushes queued records and closes the output.
func (l *Logger) Close() {
	if l == nil {
		return
	}
	l.once.Do(func() {
		close(l.ch)
		<-l.done
		l.out.Close()
	})
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
