package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgranger/pgranger/internal/testrepo"
)

// runSuites runs Ranger policy-engine test files and fails on any answer
// that differs from the fixture without a documented reason.
func runSuites(t *testing.T, files []string) {
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { runSuite(t, f) })
	}
}

// TestRangerConditionConformance runs the condition fixtures of the second
// conformance set (item and policy-level conditions).
func TestRangerConditionConformance(t *testing.T) {
	dir := testrepo.Shared(t, "ranger", "conformance", "round2")
	files, _ := filepath.Glob(filepath.Join(dir, "*conditions*.json"))
	if len(files) == 0 {
		testrepo.MissingShared(t, filepath.Join(dir, "*conditions*.json"))
	}
	runSuites(t, files)
}

// TestRangerSourceConditionFixtures runs the condition and hive fixtures of
// an Apache Ranger checkout (agents-common/src/test/resources/policyengine,
// named by RANGER_POLICYENGINE_DIR) that hold conditions. Development
// only: the files are Ranger's and are not part of this repository.
func TestRangerSourceConditionFixtures(t *testing.T) {
	dir := os.Getenv("RANGER_POLICYENGINE_DIR")
	if dir == "" {
		t.Skip("RANGER_POLICYENGINE_DIR is not set")
	}
	all, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	var files []string
	for _, f := range all {
		base := filepath.Base(f)
		if !strings.Contains(base, "conditions") && !strings.Contains(base, "hive") {
			continue
		}
		if strings.Contains(base, "filebased") || strings.Contains(base, "for_show_databases") {
			continue // their tags come from a tag file Ranger's runner loads, not from the fixture
		}
		data, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(data), `"conditions"`) {
			continue
		}
		files = append(files, f)
	}
	runSuites(t, files)
}
