package filesource

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgranger/pgranger/ranger"
)

// sink records what the source installs.
type sink struct {
	mu      sync.Mutex
	bundles []*ranger.Bundle
	reject  error
}

func (k *sink) Install(b *ranger.Bundle) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.reject != nil {
		return k.reject
	}
	k.bundles = append(k.bundles, b)
	return nil
}

func (k *sink) Clear(string) { panic("the file source never clears") }

func (k *sink) count() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.bundles)
}

func (k *sink) last() *ranger.Bundle {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.bundles[len(k.bundles)-1]
}

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type fixture struct {
	path string
	src  *Source
	sink *sink
	log  *lockedBuf
}

func newFixture(t *testing.T, poll time.Duration) *fixture {
	t.Helper()
	f := &fixture{path: filepath.Join(t.TempDir(), "hive.json"), sink: &sink{}, log: &lockedBuf{}}
	src, err := New(Config{Paths: ranger.FilePaths{Policies: f.path}, PollInterval: poll, Sink: f.sink,
		Log: slog.New(slog.NewTextHandler(f.log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	f.src = src
	return f
}

// write replaces the policy file; with bump, its modification time moves
// on even within one tick of the file system's clock.
func (f *fixture) write(t *testing.T, s string, bump bool) {
	t.Helper()
	if err := os.WriteFile(f.path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	if bump {
		next := time.Now().Add(time.Duration(len(s)) * time.Millisecond)
		os.Chtimes(f.path, next, next)
	}
}

func (f *fixture) refresh(t *testing.T) ranger.Report {
	t.Helper()
	rep, err := f.src.Refresh(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func policies(version int) string {
	return fmt.Sprintf(`{"serviceName": "hive", "policyVersion": %d, "policies": []}`, version)
}

func TestRefreshInstallsChangesAndConfirmsTheRest(t *testing.T) {
	f := newFixture(t, time.Hour)
	f.write(t, policies(1), true)
	if rep := f.refresh(t); rep.Error != "" || rep.Source != "file" || rep.Versions.Policies != 1 || rep.Versions.Tags != -1 || f.sink.count() != 1 {
		t.Fatalf("first load: %+v, %d installed", rep, f.sink.count())
	}
	first := f.src.LastSuccess()
	if rep := f.refresh(t); rep.Error != "" || f.sink.count() != 1 {
		t.Errorf("unchanged files are not installed again: %+v, %d installed", rep, f.sink.count())
	}
	if again := f.src.LastSuccess(); again.Before(first) || f.src.Err() != nil {
		t.Error("an unchanged good file renews its freshness")
	}

	f.write(t, "not json", true)
	before := f.src.LastSuccess()
	if rep := f.refresh(t); !strings.Contains(rep.Error, "hive.json") || rep.Versions.Policies != 1 {
		t.Errorf("a file that does not parse: %+v", rep)
	}
	if after := f.src.LastSuccess(); !after.Equal(before) || f.src.Err() == nil {
		t.Errorf("a failed check must not renew freshness (%v → %v, %v)", before, after, f.src.Err())
	}
	f.refresh(t)
	if n := strings.Count(f.log.String(), "policy files rejected"); n != 1 {
		t.Errorf("one problem is logged once, not once per check (%d):\n%s", n, f.log.String())
	}

	f.write(t, policies(2), true)
	if rep := f.refresh(t); rep.Error != "" || rep.Versions.Policies != 2 || f.sink.last().Policies.PolicyVersion != 2 || f.src.Err() != nil {
		t.Fatalf("files good again: %+v", rep)
	}
	os.Remove(f.path)
	if rep := f.refresh(t); rep.Error == "" || f.src.Err() == nil {
		t.Error("a missing file is an error")
	}
}

// What the sink rejects is reported until the files change; the source
// keeps confirming them (the sink ages the bundle in force itself).
func TestRejectedFiles(t *testing.T) {
	f := newFixture(t, time.Hour)
	f.write(t, policies(1), true)
	f.refresh(t)
	f.sink.reject = errors.New("engine says no")
	f.write(t, policies(2), true)
	if rep := f.refresh(t); !strings.Contains(rep.Error, "engine says no") || rep.Versions.Policies != 1 {
		t.Errorf("rejected: %+v", rep)
	}
	if rep := f.refresh(t); !strings.Contains(rep.Error, "engine says no") {
		t.Errorf("a rejection is reported until the files change: %+v", rep)
	}
	if f.src.Err() != nil || f.src.AgesRejections() {
		t.Errorf("the files themselves are fine: %v", f.src.Err())
	}
	f.sink.reject = nil
	if err := f.src.Reload(context.Background()); err != nil || f.sink.last().Policies.PolicyVersion != 2 {
		t.Errorf("reload after the sink changed its mind: %v", err)
	}
}

// Reload reads files a writer replaced within one tick of the clock, where
// Refresh sees nothing new.
func TestReloadRereads(t *testing.T) {
	f := newFixture(t, time.Hour)
	f.write(t, policies(1), false)
	f.refresh(t)
	st, _ := os.Stat(f.path)
	f.write(t, policies(2), false)
	os.Chtimes(f.path, st.ModTime(), st.ModTime())
	f.refresh(t)
	if v := f.sink.last().Policies.PolicyVersion; v != 1 {
		t.Fatalf("size and modification time unchanged, yet version %d installed", v)
	}
	if err := f.src.Reload(context.Background()); err != nil || f.sink.last().Policies.PolicyVersion != 2 {
		t.Errorf("reload: %v", err)
	}
	f.write(t, "not json", true)
	if err := f.src.Reload(context.Background()); err == nil {
		t.Error("a reload that cannot read the files fails")
	}
}

func TestStartLoadsThenPolls(t *testing.T) {
	f := newFixture(t, 20*time.Millisecond)
	f.write(t, policies(1), true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.src.Start(ctx)
	if f.sink.count() != 1 || f.src.LastSuccess().IsZero() {
		t.Fatal("Start returns after the first load")
	}
	f.write(t, policies(2), true)
	deadline := time.Now().Add(2 * time.Second)
	for f.sink.last().Policies.PolicyVersion != 2 {
		if time.Now().After(deadline) {
			t.Fatal("the change was not polled")
		}
		time.Sleep(5 * time.Millisecond)
	}

	// A refresh waits for the round running, or for its context.
	f.src.round <- struct{}{}
	short, stop := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer stop()
	if _, err := f.src.Refresh(short); err == nil {
		t.Error("a refresh behind a running round must end with its context")
	}
	<-f.src.round
}
