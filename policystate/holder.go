// Package policystate holds the policy engine in force for the proxy: it
// turns bundles from a source (files or Ranger Admin) into engines, and
// answers each statement's "which engine, and can it be trusted?" without
// locks, failing closed when nothing is loaded, when the source dropped the
// service, or when the last confirmation is older than policy.cache-ttl-secs.
package policystate

import (
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
)

// Holder turns bundles from a source into policy engines and answers
// the per-statement question "which engine, and can it be trusted?"
// without locks: the engine and its generation sit behind one atomic
// pointer, and staleness is a time comparison.
//
// It works the same for every source: the source installs bundles, may
// clear them (Ranger: the service no longer exists), and reports through
// the Source given to SetSource when it last succeeded.
type Holder struct {
	opts policy.Options
	ttl  time.Duration // policy.cache-ttl-secs at start; see TTL
	// reloadedTTL, when > 0, replaces ttl (a SIGHUP changed cache-ttl-secs).
	reloadedTTL atomic.Int64
	src         Source
	log         *slog.Logger

	cur atomic.Pointer[loadedEngine]
	gen atomic.Uint64
	// rejectedAt is set when the source delivered a bundle the engine
	// rejected, and cleared by the next accepted one. The engine in force
	// was last confirmed then, whatever the source says about later
	// checks of the same (rejected) documents, so it ages from there.
	// A source that already stops renewing its freshness for rejected
	// documents (Ranger's: they are downloaded again and a 304 to the
	// version in force confirms it) says so to SetSource.
	rejectedAt           atomic.Pointer[time.Time]
	sourceAgesRejections bool
}

// New returns a holder with nothing in force; every governed statement is
// denied until a source, connected with SetSource, installs a bundle.
// ttl is policy.cache-ttl-secs.
func New(opts policy.Options, ttl time.Duration, log *slog.Logger) *Holder {
	return &Holder{opts: opts, ttl: ttl, log: log}
}

// Source is what the holder reads of a policy source.
type Source struct {
	// LastSuccess is when the source last confirmed its documents (zero:
	// never). Every statement of every session reads it (Snapshot, on
	// each Parse, Bind and Query), so it must not take a lock the
	// sessions share: the sources publish it for an atomic load.
	LastSuccess func() time.Time
	// Err is the source's last error (nil after a successful check),
	// read only when no engine is in force, to tell clients why.
	Err func() error
	// AgesRejections: the source's last success already stops advancing
	// while it delivers documents the engine rejects.
	AgesRejections bool
}

// SetSource connects the source; it is called once, before statements
// are served.
func (h *Holder) SetSource(src Source) {
	h.src = src
	h.sourceAgesRejections = src.AgesRejections
}

// SetTTL replaces policy.cache-ttl-secs (a SIGHUP changed it).
func (h *Holder) SetTTL(d time.Duration) { h.reloadedTTL.Store(int64(d)) }

type loadedEngine struct {
	engine     *policy.Engine // nil after clear
	bundle     *ranger.Bundle // what engine was built from
	generation uint64
	versions   ranger.Versions
	cleared    string // why there is no engine (set by clear)
	at         time.Time
}

// Install builds an engine from b; a bundle the engine rejects counts as a
// failed load (the previous engine stays, and ages toward the TTL from the
// moment of the rejection).
func (h *Holder) Install(b *ranger.Bundle) error {
	eng, err := policy.NewEngine(b, h.opts)
	if err != nil {
		if !h.sourceAgesRejections {
			now := time.Now()
			h.rejectedAt.CompareAndSwap(nil, &now)
		}
		return err
	}
	le := &loadedEngine{engine: eng, bundle: b, generation: h.gen.Add(1), versions: b.Versions(), at: time.Now()}
	h.cur.Store(le)
	h.rejectedAt.Store(nil)
	h.log.Info("policies loaded", "service", eng.ServiceName(), "policyVersion", eng.PolicyVersion(),
		"tagVersion", le.versions.Tags, "roleVersion", le.versions.Roles, "userStoreVersion", le.versions.UserStore, "generation", le.generation)
	return nil
}

// Clear drops the engine: every governed statement is denied with reason
// until a bundle is installed again. The generation changes too, so no
// rewrite cached under the dropped engine can be served.
func (h *Holder) Clear(reason string) {
	if le := h.cur.Load(); le != nil && le.engine == nil && le.cleared == reason {
		return
	}
	h.cur.Store(&loadedEngine{generation: h.gen.Add(1), versions: ranger.NoVersions(), cleared: reason, at: time.Now()})
	h.log.Warn("policies dropped; governed statements are denied", "reason", reason)
}

// lastSuccess is the time the engine in force was last confirmed.
func (h *Holder) lastSuccess() time.Time {
	last := h.src.LastSuccess()
	if r := h.rejectedAt.Load(); r != nil && r.Before(last) {
		last = *r
	}
	return last
}

// Snapshot is the policies in force now (sqlrewrite.PolicySource).
func (h *Holder) Snapshot() policy.Snapshot {
	le := h.cur.Load()
	if le == nil || le.engine == nil {
		reason := "no policy bundle has been loaded"
		switch err := h.src.Err(); {
		case le != nil && le.cleared != "":
			reason = le.cleared
		case err != nil:
			reason = "no policy bundle has been loaded: " + err.Error()
		}
		st := policy.Snapshot{Unavailable: reason}
		if le != nil {
			st.Generation = le.generation
		}
		return st
	}
	st := policy.Snapshot{Engine: le.engine, Generation: le.generation}
	if age, ttl := time.Since(h.lastSuccess()), h.TTL(); age > ttl {
		st.Unavailable = fmt.Sprintf("the last successful policy load was %s ago, more than policy.cache-ttl-secs=%d", age.Round(time.Second), int(ttl/time.Second))
	}
	return st
}

// InForce is the engine in force with the bundle it was built from, or
// why none can be trusted (as Snapshot says it): authoring decides who
// may change a policy with it, resolves grantees with its user store and
// roles, and the metrics read its policies' validity schedules.
func (h *Holder) InForce() (*policy.Engine, *ranger.Bundle, string) {
	st := h.Snapshot()
	if st.Engine == nil || st.Unavailable != "" {
		reason := st.Unavailable
		if reason == "" {
			reason = "no policy bundle has been loaded"
		}
		return nil, nil, reason
	}
	if le := h.cur.Load(); le != nil && le.engine == st.Engine {
		return le.engine, le.bundle, ""
	}
	return st.Engine, nil, ""
}

// Bundle is the bundle in force, fresh or not (nil when none): what the
// metrics report on, such as when policies' validity schedules end.
func (h *Holder) Bundle() *ranger.Bundle {
	if le := h.cur.Load(); le != nil {
		return le.bundle
	}
	return nil
}

// Status is the holder's view for the admin endpoint and metrics.
type Status struct {
	Available   bool
	Reason      string // why not available
	Generation  uint64
	Versions    ranger.Versions
	LastSuccess time.Time // zero when nothing is in force
}

// Status is the holder's state for the admin endpoint, /refresh and metrics.
func (h *Holder) Status() Status {
	st := h.Snapshot()
	out := Status{Available: st.Engine != nil && st.Unavailable == "", Reason: st.Unavailable, Generation: st.Generation,
		Versions: ranger.NoVersions()}
	if le := h.cur.Load(); le != nil {
		out.Versions = le.versions
		if le.engine != nil {
			out.LastSuccess = h.lastSuccess()
		}
	}
	return out
}

// TTL is policy.cache-ttl-secs as last loaded.
func (h *Holder) TTL() time.Duration {
	if d := h.reloadedTTL.Load(); d > 0 {
		return time.Duration(d)
	}
	return h.ttl
}
