package interop

import (
	"context"
	"os"
	"testing"
	"time"
)

// SkipEnv names the environment variable that lets a developer without
// Java and Maven skip the oracle tests (INTEROP_SKIP=1). With CI=true it
// is refused: CI never passes without the oracles.
const SkipEnv = "INTEROP_SKIP"

// RangerForTest starts the Ranger oracle for t ("" version =
// RangerVersion()) and stops it when t ends. Anything missing fails t,
// loudly, with what to install.
func RangerForTest(t testing.TB, version string) *Ranger {
	t.Helper()
	skipIfAsked(t)
	r, err := StartRanger(context.Background(), version, Options{})
	if err != nil {
		t.Fatalf("%v\n(set %s=1 to skip the oracle tests where Java and Maven are knowingly absent)", err, SkipEnv)
	}
	t.Cleanup(func() { r.Close() })
	t.Logf("Ranger oracle %s (%s, Java %s) ready in %v", r.Version, r.JSEngine, r.Java, r.Started)
	return r
}

// HiveForTest starts the Hive mask oracle for t, as RangerForTest.
func HiveForTest(t testing.TB) *Hive {
	t.Helper()
	skipIfAsked(t)
	h, err := StartHive(context.Background(), Options{})
	if err != nil {
		t.Fatalf("%v\n(set %s=1 to skip the oracle tests where Java and Maven are knowingly absent)", err, SkipEnv)
	}
	t.Cleanup(func() { h.Close() })
	t.Logf("Hive oracle hive-exec %s (Java %s) ready in %v", h.Version, h.Java, h.Started)
	return h
}

// SparkForTest starts the Spark oracle for t, as RangerForTest.
func SparkForTest(t testing.TB) *Spark {
	t.Helper()
	skipIfAsked(t)
	s, err := StartSpark(context.Background(), Options{StartTimeout: 3 * time.Minute})
	if err != nil {
		t.Fatalf("%v\n(set %s=1 to skip the oracle tests where Java and Maven are knowingly absent)", err, SkipEnv)
	}
	t.Cleanup(func() { s.Close() })
	t.Logf("Spark oracle %s (Java %s) ready in %v", s.Version, s.Java, s.Started)
	return s
}

func skipIfAsked(t testing.TB) {
	t.Helper()
	if os.Getenv(SkipEnv) != "1" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s=1 is not honoured with CI=true: the oracle tests must run in CI", SkipEnv)
	}
	t.Skipf("SKIPPED: %s=1: the Ranger and Hive oracle tests did not run", SkipEnv)
}
