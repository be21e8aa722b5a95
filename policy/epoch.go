package policy

import (
	"sort"
	"time"

	"github.com/pgranger/pgranger/ranger"
)

// Decisions can depend on the clock: policy validitySchedules and tag
// validityPeriods start and end. Callers that cache what they derived from
// decisions (the SQL rewrite cache) key it by TimeEpoch, which changes
// exactly when some schedule may have switched — at every start and end
// instant, and every minute when a recurrence exists (recurrence windows
// open on cron minutes) — so no cached result outlives a schedule.

type timeline struct {
	transitions []time.Time // sorted instants at which applicability may change
	recurring   bool
}

func newTimeline(b *ranger.Bundle) timeline {
	var tl timeline
	addSchedules := func(list []ranger.RangerValiditySchedule) {
		for _, vs := range list {
			s := newSchedule(vs)
			if !s.start.IsZero() {
				tl.transitions = append(tl.transitions, s.start)
			}
			if !s.end.IsZero() {
				// The end is inclusive: the change is just after it.
				tl.transitions = append(tl.transitions, s.end.Add(time.Nanosecond))
			}
			if len(s.recurrences) > 0 {
				tl.recurring = true
			}
		}
	}
	addPolicies := func(ps []ranger.RangerPolicy) {
		for i := range ps {
			addSchedules(ps[i].ValiditySchedules)
		}
	}
	sp := b.Policies
	addPolicies(sp.Policies)
	if sp.TagPolicies != nil {
		addPolicies(sp.TagPolicies.Policies)
	}
	for _, z := range sp.SecurityZones {
		addPolicies(z.Policies)
	}
	if b.Tags != nil {
		for _, t := range b.Tags.Tags {
			addSchedules(t.ValidityPeriods)
		}
	}
	sort.Slice(tl.transitions, func(i, j int) bool { return tl.transitions[i].Before(tl.transitions[j]) })
	return tl
}

// TimeEpoch is a number that stays the same for as long as no schedule in
// the bundle can change a decision; see timeline.
func (e *Engine) TimeEpoch(at time.Time) uint64 {
	n := sort.Search(len(e.timeline.transitions), func(i int) bool { return e.timeline.transitions[i].After(at) })
	epoch := uint64(n)
	if e.timeline.recurring {
		epoch = epoch<<40 | uint64(at.Unix()/60)&(1<<40-1)
	}
	return epoch
}
