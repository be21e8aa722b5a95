package testkeycloak

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgranger/pgranger/internal/testrepo"
)

// make interop-deps fetches the release the tests start, so CI's warm
// ~/.m2 holds it.
func TestDependencyStepFetchesThisRelease(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testrepo.Root(t), "scripts", "interop-deps.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "keycloak="+Artifact+"\n") {
		t.Errorf("scripts/interop-deps.sh does not fetch %s", Artifact)
	}
}
