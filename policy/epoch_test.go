package policy

import (
	"testing"
	"time"

	"github.com/pgranger/pgranger/ranger"
)

func TestTimeEpoch(t *testing.T) {
	sp := &ranger.ServicePolicies{ServiceName: "hive", Policies: []ranger.RangerPolicy{{
		ID: 1, Name: "window", IsEnabled: true,
		ValiditySchedules: []ranger.RangerValiditySchedule{{StartTime: "2026/01/01 00:00:00", EndTime: "2026/01/31 23:59:59"}},
	}}}
	eng, err := NewEngine(&ranger.Bundle{Policies: sp}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) uint64 {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return eng.TimeEpoch(tm)
	}
	before, start, inside, end, after := at("2025-12-31T23:59:59Z"), at("2026-01-01T00:00:00Z"), at("2026-01-15T12:00:00Z"), at("2026-01-31T23:59:59Z"), at("2026-02-01T00:00:00Z")
	if before == start || start != inside || inside != end || end == after {
		t.Errorf("epochs before/start/inside/end/after = %d %d %d %d %d", before, start, inside, end, after)
	}

	sp.Policies[0].ValiditySchedules[0].Recurrences = []ranger.RangerValidityRecurrence{{}}
	eng, _ = NewEngine(&ranger.Bundle{Policies: sp}, Options{})
	t0 := time.Date(2026, 1, 10, 8, 0, 0, 0, time.UTC)
	if eng.TimeEpoch(t0) == eng.TimeEpoch(t0.Add(time.Minute)) || eng.TimeEpoch(t0) != eng.TimeEpoch(t0.Add(30*time.Second)) {
		t.Error("with a recurrence the epoch moves every minute, and only then")
	}
	plain, _ := NewEngine(&ranger.Bundle{Policies: &ranger.ServicePolicies{ServiceName: "hive"}}, Options{})
	if plain.TimeEpoch(t0) != plain.TimeEpoch(t0.Add(1000*time.Hour)) {
		t.Error("without schedules the epoch never moves")
	}
}
