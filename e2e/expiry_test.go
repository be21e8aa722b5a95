package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A policy whose validity schedule ends in three days: the gauge counts
// down to its end, and pgranger lint warns.
func TestPolicyEndsSoon(t *testing.T) {
	d := demoPolicies(t)
	end := time.Now().UTC().Add(72 * time.Hour).Truncate(time.Second)
	p := d.policy(t, 12)
	p["validitySchedules"] = []any{map[string]any{"endTime": end.Format("2006/01/02 15:04:05"), "timeZone": "GMT"}}
	p["policyLabels"] = []string{"owner:support"}
	px := startProxy(t, proxyOptions{policies: d.bytes(t)})
	code, body := adminGet(t, px, "GET", "/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	m := regexp.MustCompile(`(?m)^pgranger_policy_validity_remaining_seconds\{policy_id="12",policy_name="orders amount for support"\} (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no gauge for policy 12 in:\n%s", body)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	if left := time.Until(end).Seconds(); v > left+5 || v < left-60 {
		t.Errorf("remaining %v, want about %v", v, left)
	}
	if strings.Count(body, "pgranger_policy_validity_remaining_seconds{") != 1 {
		t.Errorf("only policies whose schedules end have the gauge:\n%s", body)
	}
	out, _ := exec.Command(binary, "lint", filepath.Join(px.dir, "policies/hive.json")).Output()
	want := fmt.Sprintf(`warning: policy 12 "orders amount for support": stops applying in 2 days 23 hours, at %s UTC, when its last validity schedule ends`, end.Format("2006/01/02 15:04:05"))
	if !strings.Contains(string(out), want) {
		t.Errorf("lint:\n%s\nwant %s", out, want)
	}
}
