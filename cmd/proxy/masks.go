package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/pgranger/pgranger/config"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/sqlrewrite"
)

// `pgranger masks --stored-ddl --config FILE [--database D] [--catalog
// FILE]` prints the ALTER TABLE statements that add a stored column for
// each mask the policy files may apply to a string column of the
// database's tables (docs/masks.md "Stored masks"), so that operators do
// not copy mask expressions by hand. It changes nothing. Exit status: 0,
// 1 when policies or the catalog cannot be read, 2 usage.
func masksCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("masks", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "the TOML configuration (policies, namespace mapping, hash algorithm, backend) (required)")
	storedDDL := fs.Bool("stored-ddl", false, "print ALTER TABLE … ADD COLUMN … GENERATED ALWAYS AS (<mask>) STORED for the masks in the policies (required)")
	catalogPath := fs.String("catalog", "", "YAML table declarations to use instead of connecting to the backend")
	database := fs.String("database", "", "the PostgreSQL database (default: the backend DSN's)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: pgranger masks --stored-ddl --config FILE [--database D] [--catalog FILE]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *cfgPath == "" || !*storedDDL || fs.NArg() != 0 {
		fs.Usage()
		return 2
	}
	cfg, err := config.Load(*cfgPath, os.Environ())
	if err != nil {
		fmt.Fprintf(stderr, "pgranger masks: %v\n", err)
		return 1
	}
	if cfg.Policy.MaskDialect == sqlrewrite.MaskDialectSpark {
		fmt.Fprintf(stderr, "pgranger masks: stored masks hold HiveServer2's results, and policy.mask-dialect = \"spark\" reads none (docs/masks.md, \"Dialects\")\n")
		return 1
	}
	b, eng, err := loadBundleEngine(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "pgranger masks: policies: %v\n", err)
		return 1
	}
	// Verifying as the proxy does, so that an existing column that does
	// not hold the mask is reported.
	snap, db, closeCatalog, ok := commandCatalog("masks", cfg, *database, *catalogPath, true, stderr)
	if !ok {
		return 1
	}
	defer closeCatalog()
	ddl, skipped := sqlrewrite.StoredMaskDDL(storedMaskSubjects(b), eng, snap, db, cfg.Policy.NamespaceMapping,
		sqlrewrite.MaskOptions{HashAlgo: cfg.Policy.HashAlgo, Dialect: cfg.Policy.MaskDialect}, time.Now())
	fmt.Fprintf(stdout, "-- pgranger stored masks for database %q: %d column(s); each holds only masked values (docs/masks.md, \"Stored masks\")\n", db, len(ddl))
	for _, s := range skipped {
		fmt.Fprintln(stdout, s)
	}
	for _, s := range ddl {
		fmt.Fprintln(stdout, s)
	}
	return 0
}

// loadBundleEngine reads the policy files (policy.source = "file") into a
// bundle and an engine.
func loadBundleEngine(cfg *config.Config) (*ranger.Bundle, *policy.Engine, error) {
	if cfg.Policy.Source != "file" {
		return nil, nil, fmt.Errorf("policy.source %q: masks reads policy files (policy.source = \"file\")", cfg.Policy.Source)
	}
	pf := cfg.Policy.File
	b, err := ranger.LoadFiles(ranger.FilePaths{Policies: pf.Policies, Tags: pf.Tags, Roles: pf.Roles, UserStore: pf.UserStore})
	if err != nil {
		return nil, nil, err
	}
	if b == nil {
		return nil, nil, errors.New("no policy bundle")
	}
	eng, err := policy.NewEngine(b, policy.Options{MaskPrecedence: cfg.Policy.MaskPrecedence})
	return b, eng, err
}

// storedMaskSubjects are the identities whose masks the DDL covers: each
// user, group and role a data-mask item of the bundle names (resource and
// tag policies), and a user in no group (public).
func storedMaskSubjects(b *ranger.Bundle) []*policy.Subject {
	const anyone = "pgranger-stored-mask-ddl"
	seen := map[string]bool{}
	out := []*policy.Subject{{User: anyone}}
	add := func(kind, name string, s *policy.Subject) {
		if !seen[kind+"\x00"+name] {
			seen[kind+"\x00"+name] = true
			out = append(out, s)
		}
	}
	var pols []ranger.RangerPolicy
	if b != nil && b.Policies != nil {
		pols = append(pols, b.Policies.Policies...)
		if b.Policies.TagPolicies != nil {
			pols = append(pols, b.Policies.TagPolicies.Policies...)
		}
	}
	for _, p := range pols {
		for _, it := range p.DataMaskPolicyItems {
			for _, u := range it.Users {
				add("u", u, &policy.Subject{User: u})
			}
			for _, g := range it.Groups {
				add("g", g, &policy.Subject{User: anyone, Groups: []string{g}})
			}
			for _, r := range it.Roles {
				add("r", r, &policy.Subject{User: anyone, Roles: []string{r}})
			}
		}
	}
	return out
}
