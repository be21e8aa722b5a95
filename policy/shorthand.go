package policy

import "time"

// Shorthands for Evaluate with one part, for tests and one-off checks
// that ask one question about a Hive resource. The proxy's callers use
// Evaluate.

// Access is Evaluate's access decision for s performing access on r at at.
func (e *Engine) Access(s *Subject, r Resource, access string, at time.Time) Decision {
	return e.Evaluate(&Request{Subject: s, Hive: r, Access: access, At: at, Want: WantAccess}).Access
}

// Mask is Evaluate's mask for column r.Column of r.Table.
func (e *Engine) Mask(s *Subject, r Resource, at time.Time) Mask {
	return e.Evaluate(&Request{Subject: s, Hive: r, At: at, Want: WantMask}).Mask
}

// RowFilter is Evaluate's row filters for table r.Table (r.Column is ignored).
func (e *Engine) RowFilter(s *Subject, r Resource, at time.Time) RowFilter {
	return e.Evaluate(&Request{Subject: s, Hive: r, At: at, Want: WantRowFilter}).RowFilter
}

// TagsOf is Evaluate's tags of r for a select.
func (e *Engine) TagsOf(s *Subject, r Resource, at time.Time) []Tag {
	return e.Evaluate(&Request{Subject: s, Hive: r, At: at, Want: WantTags}).Tags
}
