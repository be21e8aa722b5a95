package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// OracleError is an error line an oracle answered with: the request was
// read and refused or failed inside the JVM (the process goes on).
type OracleError struct {
	Oracle  string
	Message string
}

func (e *OracleError) Error() string { return e.Oracle + " oracle: " + e.Message }

// Options tune an oracle process.
type Options struct {
	// StartTimeout bounds the JVM's start up to its ready line (default 90 s:
	// class loading on a busy 2-core machine is slow).
	StartTimeout time.Duration
	// CallTimeout bounds one request (default 60 s). A request that times
	// out kills the process: its state is unknown.
	CallTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.StartTimeout <= 0 {
		o.StartTimeout = 90 * time.Second
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 60 * time.Second
	}
	return o
}

// proc is one running oracle JVM. Calls are serialised: the protocol is
// one request, one answer, in order.
type proc struct {
	name string
	opts Options
	cmd  *exec.Cmd

	mu     sync.Mutex
	stdin  io.WriteCloser
	lines  chan []byte // stdout lines; closed when stdout ends
	nextID int64
	dead   error

	stderr *tailBuffer
	done   chan struct{} // closed when the process has exited
	// Hello is the ready line the oracle printed at start.
	hello json.RawMessage
	// Started is how long the JVM took from exec to its ready line.
	started time.Duration
}

// JVM flags for a short-lived oracle: the C1 compiler only and the serial
// collector start fastest; GraalJS's warning about running without its
// optimizing compiler is expected here. The JVM's default time zone is
// UTC whatever the machine's: Ranger reads validity-schedule recurrences
// and zone-less times of conditions in it, and pgranger in UTC (a
// schedule without a zone), so answers do not depend on where tests run.
var jvmFlags = []string{"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss4m", "-Dpolyglot.engine.WarnInterpreterOnly=false", "-Duser.timezone=UTC"}

func startProc(ctx context.Context, a *Artifact, opts Options) (*proc, error) {
	opts = opts.withDefaults()
	java, err := JavaPath()
	if err != nil {
		return nil, err
	}
	args := append(append(append([]string{}, jvmFlags...), a.JVMFlags...), "-cp", strings.Join(append([]string{a.Jar}, a.Classpath...), ":"), a.MainClass)
	cmd := exec.Command(java, args...)
	p := &proc{name: a.Name, opts: opts, cmd: cmd, lines: make(chan []byte, 1), stderr: &tailBuffer{max: 16 << 10}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("interop: start %s oracle: %w", a.Name, err)
	}
	go p.read(stdout)
	go func() {
		cmd.Wait()
		close(p.done)
	}()

	line, err := p.next(ctx, opts.StartTimeout)
	if err != nil {
		p.kill()
		return nil, fmt.Errorf("interop: %s oracle did not start: %w", a.Name, err)
	}
	var hello struct {
		Ready bool `json:"ready"`
	}
	if json.Unmarshal(line, &hello) != nil || !hello.Ready {
		p.kill()
		return nil, fmt.Errorf("interop: %s oracle's first line is not its ready line: %s", a.Name, line)
	}
	p.hello, p.started = line, time.Since(t0)
	return p, nil
}

func (p *proc) read(stdout io.Reader) {
	r := bufio.NewReaderSize(stdout, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			p.lines <- line
		}
		if err != nil {
			close(p.lines)
			return
		}
	}
}

// next waits for the next stdout line.
func (p *proc) next(ctx context.Context, timeout time.Duration) ([]byte, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case line, ok := <-p.lines:
		if !ok {
			// stdout closed: wait briefly for the exit status and stderr.
			select {
			case <-p.done:
			case <-time.After(2 * time.Second):
			}
			return nil, fmt.Errorf("the JVM exited (%v); its stderr ends with:\n%s", p.cmd.ProcessState, p.stderr.String())
		}
		return line, nil
	case <-timer.C:
		return nil, fmt.Errorf("no answer within %v; stderr ends with:\n%s", timeout, p.stderr.String())
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// call sends req (a JSON object; "id" is added) and decodes the answer
// into resp. An error line becomes *OracleError; a timeout or a dead JVM
// is an error too, and the process is not used again.
func (p *proc) call(ctx context.Context, req map[string]any, resp any) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead != nil {
		return p.dead
	}
	p.nextID++
	id := p.nextID
	req["id"] = id
	data, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("interop: encode request: %w", err)
	}
	data = append(data, '\n')
	if _, err := p.stdin.Write(data); err != nil {
		p.dead = fmt.Errorf("interop: %s oracle: write: %w; stderr ends with:\n%s", p.name, err, p.stderr.String())
		p.kill()
		return p.dead
	}
	line, err := p.next(ctx, p.opts.CallTimeout)
	if err != nil {
		p.dead = fmt.Errorf("interop: %s oracle: %w", p.name, err)
		p.kill()
		return p.dead
	}
	var head struct {
		ID    *int64  `json:"id"`
		Error *string `json:"error"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		p.dead = fmt.Errorf("interop: %s oracle answered a line that is not JSON: %q", p.name, line)
		p.kill()
		return p.dead
	}
	if head.ID == nil || *head.ID != id {
		p.dead = fmt.Errorf("interop: %s oracle answered out of order (want id %d): %s", p.name, id, line)
		p.kill()
		return p.dead
	}
	if head.Error != nil {
		return &OracleError{Oracle: p.name, Message: *head.Error}
	}
	if err := json.Unmarshal(line, resp); err != nil {
		return fmt.Errorf("interop: %s oracle: decode answer: %w", p.name, err)
	}
	return nil
}

// close ends the process: stdin closes, the oracle's loop ends; a JVM that
// does not exit in time is killed.
func (p *proc) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead == nil {
		p.dead = errors.New("interop: " + p.name + " oracle closed")
	}
	p.stdin.Close()
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		p.kill()
		return fmt.Errorf("interop: %s oracle did not exit after its stdin closed; killed", p.name)
	}
}

func (p *proc) kill() {
	if p.cmd.Process != nil {
		p.cmd.Process.Kill()
	}
}

// tailBuffer keeps the last max bytes written to it (the JVM's stderr).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(b), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
