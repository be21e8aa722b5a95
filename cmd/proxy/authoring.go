package main

import (
	"context"
	"log/slog"

	"github.com/pgranger/pgranger/authoring"
	"github.com/pgranger/pgranger/config"
	"github.com/pgranger/pgranger/pgwire"
	"github.com/pgranger/pgranger/policystate"
)

// newAuthor builds the authoring service of authoring.enabled over the
// running policy source: writes go where the policies come from, and are
// in force (reloaded) before the statement is answered. nil when
// authoring is off: pgwire then refuses the statements.
func newAuthor(cfg *config.Config, holder *policystate.Holder, src *policySource, log *slog.Logger) pgwire.Author {
	if !cfg.Authoring.Enabled {
		return nil
	}
	var static []authoring.KnownPrincipal
	for _, u := range cfg.Identity.Users {
		static = append(static, authoring.KnownPrincipal{User: u.Name, Groups: u.Groups, Roles: u.Roles})
	}
	log.Info("authoring is on: GRANT, REVOKE, CREATE/ALTER/DROP POLICY and SECURITY LABEL FOR pgranger are written to the policy source",
		"source", src.kind)
	return authorAdapter{svc: authoring.New(authoring.Config{
		Store:             src.store,
		InForce:           holder.InForce,
		Reload:            src.Reload,
		NamespaceMapping:  cfg.Policy.NamespaceMapping,
		StaticUsers:       static,
		MaxStatementBytes: cfg.Listen.MaxStatementBytes,
		MaxNestingDepth:   cfg.Listen.MaxNestingDepth,
		Log:               log,
	})}
}

// authorAdapter is pgwire's Author over package authoring (pgwire and the
// policy sources do not know each other; the binary connects them).
type authorAdapter struct {
	svc *authoring.Service
}

// Author runs one authoring statement.
func (a authorAdapter) Author(ctx context.Context, req *pgwire.AuthorRequest) *pgwire.AuthorResult {
	r := a.svc.Run(ctx, &authoring.Request{SQL: req.SQL, Subject: req.Session.Subject, Database: req.Session.Database,
		ClientAddr: req.Session.ClientAddr, Relation: req.Relation})
	out := &pgwire.AuthorResult{Tag: r.Tag, Err: r.Err, Resource: r.Resource, ResType: r.ResType, Access: r.Access, Sent: r.Sent}
	for _, n := range r.Notices {
		out.Notices = append(out.Notices, pgwire.AuthorNotice{Severity: n.Severity, Message: n.Message})
	}
	return out
}
