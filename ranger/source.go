package ranger

import (
	"context"
	"time"
)

// Source is a running policy source, the value of policy.source: the
// local files (ranger/filesource) or Ranger Admin (ranger/rangeradmin).
// It is built with a Sink and delivers every new bundle there; what the
// sink says of a bundle is the source's verdict too: a rejected bundle is
// logged, reported and does not count as obtained.
//
// The binary connects it: configuration → source → sink
// (policystate.Holder), its freshness to the holder, Refresh to the admin
// endpoint's POST /refresh, Reload to authoring.
//
// Goroutines. Start loads on its caller's goroutine, then starts the poll
// loop on one goroutine of its own, which lives until Start's context
// ends. Refresh and Reload run a round on their caller's goroutine (an
// admin request, a session running an authoring statement). Rounds never
// overlap: a round waits for the one running, so the sink is called by
// one goroutine at a time. LastSuccess is read by every statement of
// every session, concurrently with all of this, and never blocks.
type Source interface {
	// Start loads what the source can before the proxy serves (the files;
	// Ranger's disk cache, then a first download bounded by the client's
	// timeout) and keeps refreshing in the background until ctx ends. It is
	// called once. What fails is logged, not returned: until a bundle is
	// installed the sink has none, and governed statements are denied.
	Start(ctx context.Context)
	// Refresh runs a round now, whatever the source's schedule (POST
	// /refresh), and reports it. The error is set only when no round ran
	// (ctx ended while another held the source).
	Refresh(ctx context.Context) (Report, error)
	// Reload brings into force what the caller has just written to the
	// source (an authoring statement, which then reads its change back): a
	// round that reads everything again, even files whose size and
	// modification time are unchanged. It fails when the round did not
	// obtain and install everything (Report.Error).
	Reload(ctx context.Context) error
	// LastSuccess is when the source last confirmed its documents (zero:
	// never): the bundle in force is as fresh as this, and denied past
	// policy.cache-ttl-secs. An atomic load.
	LastSuccess() time.Time
	// Err is why the last round failed, nil after a successful one, worded
	// for SQL clients: the holder shows it when no bundle is in force.
	Err() error
	// AgesRejections: LastSuccess already stops advancing while the sink
	// rejects what the source delivers (Ranger Admin's source downloads a
	// rejected version again, and only confirming the version in force
	// counts). A source that confirms unchanged documents without asking
	// the sink again (the files) leaves the ageing to the sink.
	AgesRejections() bool
}

// Sink receives what a source delivers: in the binary, the holder of the
// policies in force (policystate.Holder).
type Sink interface {
	// Install puts b in force, or rejects it with the reason.
	Install(b *Bundle) error
	// Clear drops the bundle in force: the source says the service no
	// longer exists, and every governed statement is to be denied.
	Clear(reason string)
}

// Report is what one round of a source did, as POST /refresh answers it.
type Report struct {
	// Source is policy.source: "file" or "ranger".
	Source string `json:"source"`
	// Versions are the versions of the documents the source holds after
	// the round (-1: none).
	Versions Versions `json:"versions"`
	// Results are, for Ranger Admin, what each document's download did,
	// by document ("policies", "tags", "roles", "userstore").
	Results map[string]DocumentResult `json:"results,omitempty"`
	// Breaker is, for Ranger Admin, the circuit breaker's state after the
	// round (closed, open, half-open).
	Breaker string `json:"breaker,omitempty"`
	// Error is "" when every document was obtained or confirmed, and what
	// changed was installed.
	Error string `json:"error"`
}

// DocumentResult is one document's part of a Report.
type DocumentResult struct {
	Status  string `json:"status"`  // HTTP status or a label (transport_error, …)
	Outcome string `json:"outcome"` // updated, not_modified, service_not_found, failed, rejected
	Error   string `json:"error,omitempty"`
}
