package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/pgranger/pgranger/lint"
	"github.com/pgranger/pgranger/ranger"
)

// `pgranger lint POLICIES.json...` prints the findings of package lint,
// one line each (prefixed by the file when there are several files), and a
// count of errors and warnings on stderr.
//
// Exit status: 0 no errors (warnings are printed but pass), 1 errors — or
// warnings with --strict —, 2 usage or an unreadable file.
func lintCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lint", flag.ContinueOnError)
	fs.SetOutput(stderr)
	atFlag := fs.String("at", "", "the time schedules are judged at, RFC 3339 (default: now)")
	strict := fs.Bool("strict", false, "exit 1 on warnings too, not only on errors")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: pgranger lint [--strict] [--at TIME] POLICIES.json...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	at := time.Now()
	if *atFlag != "" {
		t, err := time.Parse(time.RFC3339, *atFlag)
		if err != nil {
			fmt.Fprintf(stderr, "pgranger lint: --at: %v\n", err)
			return 2
		}
		at = t
	}
	errs, warns := 0, 0
	for _, file := range fs.Args() {
		data, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintf(stderr, "pgranger lint: %v\n", err)
			return 2
		}
		sp, err := ranger.ParseServicePolicies(data)
		if err != nil {
			fmt.Fprintf(stderr, "pgranger lint: %s: %v\n", file, err)
			return 2
		}
		prefix := ""
		if fs.NArg() > 1 {
			prefix = file + ": "
		}
		for _, f := range lint.Policies(sp, at) {
			fmt.Fprintln(stdout, prefix+f.String())
			if f.Severity() == lint.Error {
				errs++
			} else {
				warns++
			}
		}
	}
	if errs+warns > 0 {
		fmt.Fprintf(stderr, "pgranger lint: %d error(s), %d warning(s)\n", errs, warns)
	}
	if errs > 0 || *strict && warns > 0 {
		return 1
	}
	return 0
}
