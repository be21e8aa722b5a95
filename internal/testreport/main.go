// Command testreport turns `go test -json` on stdin into what `make test`
// shows: one line per package as it finishes (ok / FAIL / ok with skips),
// the full output of every failing test, a note every minute naming the
// packages still running, and at the end a summary of every skipped test
// with its reason. Skips because Apache Ranger's conformance data
// (../shared/ranger beside the checkout) is absent are listed apart; with
// -fail-conformance-skips (scripts/test.sh sets it when CI=true) they fail
// the run, so CI cannot pass while those suites did not run.
//
// Lines that are not JSON events (build errors, go vet's or the go
// command's own messages) are copied through unchanged. The exit status is
// 1 when any package or test failed, when go test's output ended without a
// result for a package it started, or when conformance skips are fatal.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// event is one record of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// conformanceMarker is what a skip message of a conformance suite names:
// every test that reads Ranger's conformance data skips with the path it
// looked for, which lies under shared/ranger (docs/testing.md).
const conformanceMarker = "shared/ranger"

type skip struct {
	pkg, test, reason string
}

type pkgState struct {
	started time.Time
	output  []string            // package-level output (TestMain, build, panics)
	tests   map[string][]string // per-test output, dropped when the test passes
	failed  []string            // names of failed tests, in order
	skips   []skip
	passed  int
}

type report struct {
	mu       sync.Mutex
	w        io.Writer
	pkgs     map[string]*pkgState
	order    []string
	skips    []skip
	failures []string
	done     map[string]bool
}

func main() {
	failConf := flag.Bool("fail-conformance-skips", false, "exit 1 when a conformance suite skipped because its data is absent")
	heartbeat := flag.Duration("heartbeat", time.Minute, "how often to name the packages still running (0: never)")
	flag.Parse()
	r := &report{w: os.Stdout, pkgs: map[string]*pkgState{}, done: map[string]bool{}}
	stop := make(chan struct{})
	if *heartbeat > 0 {
		go r.beat(*heartbeat, stop)
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		r.line(sc.Bytes())
	}
	close(stop)
	os.Exit(r.finish(*failConf))
}

func (r *report) line(b []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ev event
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &ev) != nil || ev.Action == "" {
		fmt.Fprintf(r.w, "%s\n", b)
		return
	}
	// Compiler errors arrive as build-output events (keyed by ImportPath,
	// not Package) before the package's fail: shown as they come.
	if ev.Action == "build-output" {
		fmt.Fprint(r.w, ev.Output)
		return
	}
	if ev.Action == "build-fail" {
		return
	}
	p := r.pkgs[ev.Package]
	if p == nil {
		p = &pkgState{started: time.Now(), tests: map[string][]string{}}
		r.pkgs[ev.Package] = p
		r.order = append(r.order, ev.Package)
	}
	switch {
	case ev.Action == "output":
		if ev.Test == "" {
			p.output = append(p.output, ev.Output)
		} else {
			p.tests[ev.Test] = append(p.tests[ev.Test], ev.Output)
		}
	case ev.Test != "":
		switch ev.Action {
		case "pass":
			p.passed++
			delete(p.tests, ev.Test)
		case "fail":
			p.failed = append(p.failed, ev.Test)
		case "skip":
			s := skip{ev.Package, ev.Test, skipReason(p.tests[ev.Test])}
			p.skips = append(p.skips, s)
			r.skips = append(r.skips, s)
			delete(p.tests, ev.Test)
		}
	case ev.Action == "pass" || ev.Action == "fail" || ev.Action == "skip":
		r.finishPackage(ev, p)
	}
}

// skipReason is what the test printed before it skipped, without the
// framework's own "=== RUN" and "--- SKIP" lines.
func skipReason(out []string) string {
	var kept []string
	for _, l := range out {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		kept = append(kept, t)
	}
	return strings.Join(kept, " ")
}

func (r *report) finishPackage(ev event, p *pkgState) {
	r.done[ev.Package] = true
	switch ev.Action {
	case "skip": // no test files
		return
	case "pass":
		note := ""
		if len(p.skips) > 0 {
			note = fmt.Sprintf("  (%d skipped)", len(p.skips))
		}
		fmt.Fprintf(r.w, "ok   %-50s %6.1fs  %d passed%s\n", ev.Package, ev.Elapsed, p.passed, note)
		return
	}
	r.failures = append(r.failures, ev.Package)
	fmt.Fprintf(r.w, "FAIL %-50s %6.1fs\n", ev.Package, ev.Elapsed)
	for _, name := range p.failed {
		// A parent test fails when a subtest does; its own output is
		// usually just "--- FAIL" lines, printed anyway for context.
		for _, l := range p.tests[name] {
			fmt.Fprint(r.w, "    ", l)
		}
	}
	for _, l := range p.output {
		if t := strings.TrimSpace(l); t == "PASS" || t == "FAIL" || strings.HasPrefix(t, "ok ") {
			continue
		}
		fmt.Fprint(r.w, "    ", l)
	}
}

func (r *report) beat(every time.Duration, stop chan struct{}) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		r.mu.Lock()
		var running []string
		for _, name := range r.order {
			p := r.pkgs[name]
			if !r.done[name] {
				running = append(running, fmt.Sprintf("%s (%s, %d tests passed)", name, time.Since(p.started).Round(time.Second), p.passed))
			}
		}
		if len(running) > 0 {
			fmt.Fprintf(r.w, "...  still running: %s\n", strings.Join(running, ", "))
		}
		r.mu.Unlock()
	}
}

// finish prints the skip summary and returns the exit status.
func (r *report) finish(failConf bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	status := 0
	for _, name := range r.order {
		if !r.done[name] {
			fmt.Fprintf(r.w, "FAIL %s: go test ended without a result for this package\n", name)
			r.failures = append(r.failures, name)
		}
	}
	var conf, other []skip
	for _, s := range r.skips {
		if strings.Contains(s.reason, conformanceMarker) {
			conf = append(conf, s)
		} else {
			other = append(other, s)
		}
	}
	sort.SliceStable(other, func(i, j int) bool { return other[i].pkg < other[j].pkg })
	if len(other) > 0 {
		fmt.Fprintf(r.w, "\nSKIPPED (%d):\n", len(other))
		for _, s := range other {
			fmt.Fprintf(r.w, "  %s %s: %s\n", short(s.pkg), s.test, s.reason)
		}
	}
	if len(conf) > 0 {
		fmt.Fprintf(r.w, "\nSKIPPED CONFORMANCE SUITES (%d) — Apache Ranger's conformance data is not beside the checkout (../shared/ranger), so these did not run:\n", len(conf))
		for _, s := range conf {
			fmt.Fprintf(r.w, "  %s %s: %s\n", short(s.pkg), s.test, s.reason)
		}
		if failConf {
			fmt.Fprintln(r.w, "FAIL: conformance suites skipped (CI=true requires them to run)")
			status = 1
		}
	}
	if len(r.failures) > 0 {
		fmt.Fprintf(r.w, "\nFAIL: %s\n", strings.Join(r.failures, ", "))
		status = 1
	} else if status == 0 {
		fmt.Fprintln(r.w, "\nall packages passed")
	}
	return status
}

func short(pkg string) string {
	return strings.TrimPrefix(pkg, "github.com/pgranger/pgranger/")
}
