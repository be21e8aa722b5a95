// Package testrepo finds, for tests, the repository's root and the shared
// test data beside it: ../shared holds Apache Ranger's own test files,
// which are read in place and never copied into the repository.
package testrepo

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Dir is the directory holding go.mod, found from the working directory
// upwards (a package's tests run in its own directory).
func Dir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// Root is Dir for a test: it fails the test when there is no go.mod.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Shared returns the path of parts under ../shared beside the
// repository, when it exists. A clone on its own has no ../shared: there
// the test is skipped with a message naming the path (make test lists
// such skips apart, as suites that did not run), except with CI=true,
// where the data must be present and its absence fails the test.
func Shared(t testing.TB, parts ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{Root(t), "..", "shared"}, parts...)...)
	if _, err := os.Stat(p); err != nil {
		MissingShared(t, p)
	}
	return p
}

// MissingShared stops a test whose shared data at p is absent or empty:
// a failure with CI=true, a skip otherwise.
func MissingShared(t testing.TB, p string) {
	t.Helper()
	msg := p + " not found: Apache Ranger's test data lives beside the repository, in ../shared, and is not part of it"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " (CI=true requires it)")
	}
	t.Skip("SKIPPED: " + msg)
}
