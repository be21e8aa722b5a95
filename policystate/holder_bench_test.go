package policystate

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/ranger/filesource"
)

// BenchmarkSnapshotParallel is the question every Parse, Bind and
// Query asks (rewriteEnv), from every session at once: which engine, and
// is it fresh? The source is a real file source, as policy.source = "file"
// wires it.
func BenchmarkSnapshotParallel(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "hive.json")
	if err := os.WriteFile(path, []byte(`{"serviceName":"hive","policyVersion":1,"policies":[]}`), 0o644); err != nil {
		b.Fatal(err)
	}
	h := New(policy.Options{}, time.Hour, slog.New(slog.DiscardHandler))
	src, err := filesource.New(filesource.Config{Paths: ranger.FilePaths{Policies: path}, PollInterval: time.Hour, Sink: h})
	if err != nil {
		b.Fatal(err)
	}
	h.SetSource(Source{LastSuccess: src.LastSuccess, Err: src.Err})
	if rep, err := src.Refresh(context.Background()); err != nil || rep.Error != "" {
		b.Fatal(err, rep.Error)
	}
	if st := h.Snapshot(); st.Engine == nil || st.Unavailable != "" {
		b.Fatalf("not in force: %+v", st)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if h.Snapshot().Engine == nil {
				b.Fatal("no engine")
			}
		}
	})
}
