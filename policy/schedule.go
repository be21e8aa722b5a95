package policy

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pgranger/pgranger/ranger"
)

// schedule is a RangerValiditySchedule (RangerValidityScheduleEvaluator).
// Start and end are wall-clock times in the schedule's zone (GMT when
// blank), both inclusive; a missing or unreadable bound is open.
//
// Recurrences open a window at each instant matching the cron-like fields
// and keep it open for the interval. Ranger checks recurrences against the
// plugin JVM's default time zone; pgranger uses the schedule's zone, which
// is what the person writing the schedule sees in Ranger's UI.
type schedule struct {
	start, end  time.Time // zero = open
	loc         *time.Location
	recurrences []*recurrence
}

type recurrence struct {
	minute, hour, dom, dow, month, year fieldSpec
	interval                            time.Duration
}

// fieldSpec is one cron field: nil matches everything.
type fieldSpec []valueRange

type valueRange struct{ lo, hi int }

func (f fieldSpec) matches(v int) bool {
	if f == nil {
		return true
	}
	for _, r := range f {
		if v >= r.lo && v <= r.hi {
			return true
		}
	}
	return false
}

const scheduleLayout = "2006/01/02 15:04:05"

func newSchedule(vs ranger.RangerValiditySchedule) *schedule {
	s := &schedule{loc: javaTimeZone(vs.TimeZone)}
	if t, err := time.ParseInLocation(scheduleLayout, strings.TrimSpace(vs.StartTime), s.loc); err == nil {
		s.start = t
	}
	if t, err := time.ParseInLocation(scheduleLayout, strings.TrimSpace(vs.EndTime), s.loc); err == nil {
		s.end = t
	}
	for _, r := range vs.Recurrences {
		s.recurrences = append(s.recurrences, newRecurrence(r))
	}
	return s
}

func newRecurrence(r ranger.RangerValidityRecurrence) *recurrence {
	sc := r.Schedule
	return &recurrence{
		minute:   parseField(string(sc.Minute)),
		hour:     parseField(string(sc.Hour)),
		dom:      parseField(string(sc.DayOfMonth)),
		dow:      parseField(string(sc.DayOfWeek)),
		month:    parseField(string(sc.Month)),
		year:     parseField(string(sc.Year)),
		interval: time.Duration(r.Interval.Days)*24*time.Hour + time.Duration(r.Interval.Hours)*time.Hour + time.Duration(r.Interval.Minutes)*time.Minute,
	}
}

// parseField reads "*", "a,b" and "a-b" lists; a blank or unreadable field
// matches everything, as Ranger's validator fills blanks with "*".
func parseField(s string) fieldSpec {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	var f fieldSpec
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		if part == "*" || (isRange && (strings.TrimSpace(lo) == "*" || strings.TrimSpace(hi) == "*")) {
			return nil
		}
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			return nil
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil {
				return nil
			}
		}
		f = append(f, valueRange{a, b})
	}
	return f
}

// ValidityEnd is the instant a validity schedule ends, read as the engine
// reads it (wall-clock endTime in the schedule's time zone, GMT when
// blank); ok is false when the schedule has no readable end. For
// `pgranger lint`.
func ValidityEnd(vs ranger.RangerValiditySchedule) (end time.Time, ok bool) {
	s := newSchedule(vs)
	return s.end, !s.end.IsZero()
}

func (s *schedule) applicable(at time.Time) bool {
	if !s.start.IsZero() && at.Before(s.start) {
		return false
	}
	if !s.end.IsZero() && at.After(s.end) {
		return false
	}
	if len(s.recurrences) == 0 {
		return true
	}
	for _, r := range s.recurrences {
		if r.applicable(at.In(s.loc)) {
			return true
		}
	}
	return false
}

// applicable finds the latest minute at or before now that matches every
// field and checks that now is within the interval after it. Fields that do
// not match skip back a whole year, month, day or hour at a time.
func (r *recurrence) applicable(now time.Time) bool {
	if r.interval <= 0 {
		return true // Ranger treats a recurrence without an interval as always open
	}
	loc := now.Location()
	t := now.Truncate(time.Minute)
	limit := now.Add(-r.interval)
	for steps := 0; !t.Before(limit) && steps < 1_000_000; steps++ {
		y, mo, d := t.Date()
		h, mi := t.Hour(), t.Minute()
		switch {
		case !r.year.matches(y):
			t = time.Date(y-1, time.December, 31, 23, 59, 0, 0, loc)
		case !r.month.matches(int(mo)):
			t = time.Date(y, mo, 1, 0, 0, 0, 0, loc).Add(-time.Minute)
		case !r.dom.matches(d) || !r.dow.matches(int(t.Weekday())+1):
			t = time.Date(y, mo, d, 0, 0, 0, 0, loc).Add(-time.Minute)
		case !r.hour.matches(h):
			t = time.Date(y, mo, d, h, 0, 0, 0, loc).Add(-time.Minute)
		case !r.minute.matches(mi):
			t = t.Add(-time.Minute)
		default:
			return true
		}
	}
	return false
}

var gmtOffsetID = regexp.MustCompile(`^(?:GMT|UTC)([+-])(\d{1,2})(?::?(\d{2}))?$`)

// javaTimeZone resolves a Java TimeZone id. Java maps unknown ids to GMT,
// and so does this; the three-letter ids Java still accepts map to the
// zones Java gives them.
func javaTimeZone(id string) *time.Location {
	id = strings.TrimSpace(id)
	if id == "" || id == "GMT" || id == "UTC" || id == "Z" {
		return time.UTC
	}
	if m := gmtOffsetID.FindStringSubmatch(id); m != nil {
		h, _ := strconv.Atoi(m[2])
		mins := 0
		if m[3] != "" {
			mins, _ = strconv.Atoi(m[3])
		}
		off := h*3600 + mins*60
		if m[1] == "-" {
			off = -off
		}
		return time.FixedZone(id, off)
	}
	if alias, ok := javaShortIDs[id]; ok {
		id = alias
	}
	if strings.HasPrefix(id, "fixed:") {
		off, _ := strconv.Atoi(id[len("fixed:"):])
		return time.FixedZone(id, off*60)
	}
	if loc, err := time.LoadLocation(id); err == nil {
		return loc
	}
	return time.UTC
}

// javaShortIDs are the legacy three-letter ids of java.util.TimeZone
// (ZoneId.SHORT_IDS, plus the fixed-offset EST/MST/HST).
var javaShortIDs = map[string]string{
	"ACT": "Australia/Darwin", "AET": "Australia/Sydney", "AGT": "America/Argentina/Buenos_Aires",
	"ART": "Africa/Cairo", "AST": "America/Anchorage", "BET": "America/Sao_Paulo",
	"BST": "Asia/Dhaka", "CAT": "Africa/Harare", "CNT": "America/St_Johns",
	"CST": "America/Chicago", "CTT": "Asia/Shanghai", "EAT": "Africa/Addis_Ababa",
	"ECT": "Europe/Paris", "IET": "America/Indiana/Indianapolis", "IST": "Asia/Kolkata",
	"JST": "Asia/Tokyo", "MIT": "Pacific/Apia", "NET": "Asia/Yerevan",
	"NST": "Pacific/Auckland", "PLT": "Asia/Karachi", "PNT": "America/Phoenix",
	"PRT": "America/Puerto_Rico", "PST": "America/Los_Angeles", "SST": "Pacific/Guadalcanal",
	"VST": "Asia/Ho_Chi_Minh", "EST": "fixed:-300", "MST": "fixed:-420", "HST": "fixed:-600",
}
