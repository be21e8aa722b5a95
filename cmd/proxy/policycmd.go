package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/pgranger/pgranger/config"
	"github.com/pgranger/pgranger/policysync"
	"github.com/pgranger/pgranger/ranger"
)

// policyCommand is `pgranger policy export | diff | sync`: policies as
// code against the configuration's policy source (docs/authoring.md,
// "Policies as code"). Exit status: export and sync 0 when done, sync 1
// when the directory has lint errors (nothing written); diff 0 when the
// directory and the source are in step, 1 when not; 2 on usage, read or
// write errors.
func policyCommand(args []string, stdout, stderr io.Writer) int {
	usage := func() {
		fmt.Fprintln(stderr, "usage: pgranger policy export --config FILE --dir DIR\n"+
			"       pgranger policy diff   --config FILE --dir DIR\n"+
			"       pgranger policy sync   --config FILE --dir DIR [--dry-run] [--prune]")
	}
	if len(args) == 0 {
		usage()
		return 2
	}
	verb := args[0]
	switch verb {
	case "export", "diff", "sync":
	default:
		fmt.Fprintf(stderr, "pgranger policy: unknown command %q\n", verb)
		usage()
		return 2
	}
	fs := flag.NewFlagSet("policy "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "the pgranger configuration whose policy source to use (required)")
	dir := fs.String("dir", "", "the directory of policies, one JSON file each (required)")
	dryRun, prune := new(bool), new(bool)
	if verb == "sync" {
		dryRun = fs.Bool("dry-run", false, "print the plan and write nothing")
		prune = fs.Bool("prune", false, "delete policies the directory does not have, among those carrying managed-by:pgranger")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *cfgPath == "" || *dir == "" || fs.NArg() != 0 {
		usage()
		return 2
	}
	cfg, err := config.Load(*cfgPath, os.Environ())
	if err != nil {
		fmt.Fprintf(stderr, "pgranger policy %s: %v\n", verb, err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	src, err := policySyncSource(cfg, log)
	if err != nil {
		fmt.Fprintf(stderr, "pgranger policy %s: %v\n", verb, err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	fail := func(err error) int {
		fmt.Fprintf(stderr, "pgranger policy %s: %s: %v\n", verb, src.Describe(), err)
		return 2
	}
	if verb == "export" {
		n, err := policysync.Export(ctx, src, *dir)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "exported %d policies of %s to %s\n", n, src.Describe(), *dir)
		return 0
	}
	want, err := policysync.ReadDir(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "pgranger policy %s: %v\n", verb, err)
		return 2
	}
	plan, err := policysync.Compare(ctx, src, want, cfg.Policy.ServiceName)
	if err != nil {
		return fail(err)
	}
	if verb == "diff" {
		plan.Print(stdout, false)
		if !plan.InStep() {
			return 1
		}
		return 0
	}
	if errs := policysync.Lint(want, cfg.Policy.ServiceName, plan.Def, time.Now()); len(errs) > 0 {
		for _, f := range errs {
			fmt.Fprintln(stderr, f.String())
		}
		fmt.Fprintf(stderr, "pgranger policy sync: %s has %d lint error(s) (pgranger lint); nothing was written\n", *dir, len(errs))
		return 1
	}
	if *dryRun {
		plan.Print(stdout, *prune)
		fmt.Fprintln(stdout, "dry run: nothing was written")
		return 0
	}
	n, err := policysync.Apply(ctx, src, plan, cfg.Policy.ServiceName, *prune, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "pgranger policy sync: %s: %v (%d written before)\n", src.Describe(), err, n)
		return 2
	}
	fmt.Fprintf(stdout, "%d written to %s\n", n, src.Describe())
	return 0
}

// policySyncSource is the configuration's policy source as policysync
// reads and writes it.
func policySyncSource(cfg *config.Config, log *slog.Logger) (policysync.Source, error) {
	switch cfg.Policy.Source {
	case "ranger":
		client, err := newAdminClient(cfg, log)
		if err != nil {
			return nil, err
		}
		return policysync.RangerSource{Client: client}, nil
	case "file":
		return policysync.FileSource{Files: ranger.NewFileStore(ranger.FilePaths{Policies: cfg.Policy.File.Policies})}, nil
	}
	return nil, fmt.Errorf("policy.source: unknown source %q", cfg.Policy.Source)
}
