package audit

import "time"

// The records of a SQL text are built here from two halves: what the
// rewrite decided (Decision: made with its access decisions, under the
// policy snapshot those were made under) and what the execution told
// (Outcome). The session supplies who ran it (Session).

// Session is the part of every record the session knows: who, from where.
type Session struct {
	User       string
	Repo       string // the Ranger service name
	ClientIP   string
	Database   string
	Roles      []string
	AuthMethod string
	TokenSub   string
	TokenID    string
}

// Decision is what a text's records say of the decisions made for it.
// It is immutable once built: results carrying it are shared.
type Decision struct {
	Fingerprint string
	// PolicyGeneration and PolicyVersion are those of the policies the
	// text was decided under; PolicyVersion is nil when none were in force.
	PolicyGeneration uint64
	PolicyVersion    *int64
	// Statements: one per statement of an allowed text, in order.
	Statements []Statement
	// Denied is the record of a refused text; nil when it was allowed.
	Denied *Denied
}

// Statement is one allowed statement: its action (the statement kind) and
// the governed relations it uses, one record each; a statement that uses
// none has one record of its own, written when Audited.
type Statement struct {
	Action  string
	Audited bool
	Uses    []Use
}

// Use is one governed relation a statement uses, as its record names it.
type Use struct {
	Resource, ResType, Access string
	Policy                    int64 // the first deciding access policy; 0 = none
	MaskPolicies              []int64
	FilterPolicies            []int64
	Audited                   bool // the bundle's audit settings audit it
}

// Denied is the record of a refusal.
type Denied struct {
	Audited           bool
	Action            string
	Resource, ResType string
	Access            string
	Policy            int64
	Reason            string
}

// Outcome is what the execution of one statement told.
type Outcome struct {
	Start  time.Time // when it was checked, or the previous statement of its text completed
	End    time.Time
	Rows   int64 // rows of its command tag; < 0: unknown
	Failed bool  // the backend answered with an error
}

func (s *Session) base(d *Decision, at time.Time) Record {
	return Record{
		EvtTime:       at.UTC(),
		ReqUser:       s.User,
		Repo:          s.Repo,
		CliIP:         s.ClientIP,
		Database:      s.Database,
		Fingerprint:   d.Fingerprint,
		Result:        1,
		Roles:         s.Roles,
		AuthMethod:    s.AuthMethod,
		TokenSub:      s.TokenSub,
		TokenID:       s.TokenID,
		PolicyVersion: d.PolicyVersion,
	}
}

// Ran writes the records of statement i of d, which ran with outcome o:
// one per governed relation it used, or one for the statement, each when
// the decision audits it.
func (l *Logger) Ran(s *Session, d *Decision, i int, o Outcome) {
	if l == nil || i >= len(d.Statements) {
		return
	}
	st := &d.Statements[i]
	base := s.base(d, o.Start)
	base.Action = st.Action
	if o.Rows >= 0 {
		rows := o.Rows
		base.RowsAffected = &rows
	}
	dur := float64(o.End.Sub(o.Start).Microseconds()) / 1000
	base.DurationMs = &dur
	base.Failed = o.Failed
	if len(st.Uses) == 0 {
		if st.Audited {
			rec := base
			l.Log(&rec)
		}
		return
	}
	for j := range st.Uses {
		u := &st.Uses[j]
		if !u.Audited {
			continue
		}
		rec := base
		rec.Access, rec.Resource, rec.ResType = u.Access, u.Resource, u.ResType
		rec.Policy = u.Policy
		rec.MaskPolicies, rec.FilterPolicies = u.MaskPolicies, u.FilterPolicies
		l.Log(&rec)
	}
}

// Refused writes the record of d's refusal, at, when the decision audits
// it; nothing of the text ran.
func (l *Logger) Refused(s *Session, d *Decision, at time.Time) {
	if l == nil || d.Denied == nil || !d.Denied.Audited {
		return
	}
	den := d.Denied
	r := s.base(d, at)
	r.Result = 0
	r.Action = den.Action
	r.Resource, r.ResType, r.Access, r.Policy = den.Resource, den.ResType, den.Access, den.Policy
	r.Reason = den.Reason
	l.Log(&r)
}

// Authored is what an authoring statement did, for its record.
type Authored struct {
	Action                    string
	Resource, ResType, Access string
	Sent                      []string
	Refused                   bool
	Reason                    string
	PolicyVersion             *int64 // of the policies in force when it completed
}

// Author writes the record of an authoring statement, allowed or refused.
func (l *Logger) Author(s *Session, fingerprint string, a *Authored, at time.Time) {
	if l == nil {
		return
	}
	r := s.base(&Decision{Fingerprint: fingerprint, PolicyVersion: a.PolicyVersion}, at)
	r.Action = a.Action
	r.Resource, r.ResType, r.Access = a.Resource, a.ResType, a.Access
	r.Sent = a.Sent
	if a.Refused {
		r.Result = 0
		r.Reason = a.Reason
	}
	l.Log(&r)
}
