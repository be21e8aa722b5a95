package policy

// Snapshot is the policies in force for one statement, as the caller took
// them when the statement arrived: the engine, its generation, or why no
// engine can be trusted. A rewrite decides, and its audit records are
// decided, under one Snapshot, however often the policies reload meanwhile.
type Snapshot struct {
	Engine     *Engine // nil when no usable bundle was ever loaded
	Generation uint64  // changes whenever Engine changes
	// Unavailable, when not empty, says why policies cannot be trusted
	// (stale past cache-ttl-secs, never loaded); every governed statement is
	// then denied with it.
	Unavailable string
}

// Version is the policyVersion of the bundle in force; false when there
// is none.
func (s Snapshot) Version() (int64, bool) {
	if s.Engine == nil {
		return 0, false
	}
	return s.Engine.PolicyVersion(), true
}
