package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/catalog/yamlcatalog"
	"github.com/pgranger/pgranger/config"
	"github.com/pgranger/pgranger/decisiontable"
	"github.com/pgranger/pgranger/policy/policytest"
)

// `pgranger test FILE...` runs Apache Ranger's policy-engine test files
// (*.json, see policy/policytest) and pgranger's own decision tables
// (*.yaml, *.yml; format in docs/configuration.md and below). Each failing
// case is printed by name; the last line is "N passed, M failed" (plus
// "K known-different" when a Ranger file was run). Exit status 1 on any
// failure or unreadable file.

func testCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	verbose := fs.Bool("v", false, "print every case, not only the failing ones")
	cfgPath := fs.String("config", "", "configuration whose policy files, options and static users decision tables without `policies:` use")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: pgranger test [-v] [--config FILE] FILE...   (Ranger policy-engine *.json, decision tables *.yaml)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	var cfg *config.Config
	if *cfgPath != "" {
		c, err := config.Load(*cfgPath, os.Environ())
		if err != nil {
			fmt.Fprintf(stderr, "pgranger test: %v\n", err)
			return 2
		}
		cfg = c
	}
	var passed, failed, known int
	anyRanger := false
	for _, file := range fs.Args() {
		name := filepath.Base(file)
		switch strings.ToLower(filepath.Ext(file)) {
		case ".json":
			anyRanger = true
			suite, err := policytest.LoadFile(file)
			if err != nil {
				fmt.Fprintf(stdout, "FAIL %s: %v\n", name, err)
				failed++
				continue
			}
			rep := suite.Run()
			for _, r := range rep.Results {
				switch {
				case r.Status == policytest.Failed:
					fmt.Fprintf(stdout, "FAIL %s: [%s] %s\n    want %s\n    got  %s\n", name, r.Kind, r.Case, r.Want, r.Got)
				case r.Status == policytest.Different && *verbose:
					fmt.Fprintf(stdout, "KNOWN %s: [%s] %s: %s\n", name, r.Kind, r.Case, r.Reason)
				case *verbose:
					fmt.Fprintf(stdout, "ok   %s: [%s] %s\n", name, r.Kind, r.Case)
				}
			}
			fmt.Fprintf(stdout, "%s: %d passed, %d failed, %d known-different\n", name, rep.Passed, rep.Failed, rep.Known)
			passed, failed, known = passed+rep.Passed, failed+rep.Failed, known+rep.Known
		case ".yaml", ".yml":
			suite, err := decisiontable.Load(file, decisiontable.Options{Config: cfg, Catalog: decodeCatalog})
			if err != nil {
				fmt.Fprintf(stdout, "FAIL %s: %v\n", name, err)
				failed++
				continue
			}
			p, f := 0, 0
			for _, r := range suite.Run() {
				if r.OK {
					p++
					if *verbose {
						fmt.Fprintf(stdout, "ok   %s: [%s] %s\n", name, r.Kind, r.Name)
					}
					continue
				}
				f++
				fmt.Fprintf(stdout, "FAIL %s: [%s] %s\n", name, r.Kind, r.Name)
				for _, m := range r.Mismatches {
					fmt.Fprintf(stdout, "    %s\n", m)
				}
			}
			fmt.Fprintf(stdout, "%s: %d passed, %d failed\n", name, p, f)
			passed, failed = passed+p, failed+f
		default:
			fmt.Fprintf(stdout, "FAIL %s: not a Ranger policy-engine test file (.json) or a decision table (.yaml)\n", name)
			failed++
		}
	}
	if anyRanger {
		fmt.Fprintf(stdout, "%d passed, %d failed, %d known-different\n", passed, failed, known)
	} else {
		fmt.Fprintf(stdout, "%d passed, %d failed\n", passed, failed)
	}
	if failed > 0 {
		return 1
	}
	return 0
}

// decodeCatalog builds a decision table's static catalog from its table
// declarations (package yamlcatalog).
func decodeCatalog(n *yaml.Node, functions []string) (*catalog.Snapshot, error) {
	var tables []yamlcatalog.Table
	if err := n.Decode(&tables); err != nil {
		return nil, err
	}
	return yamlcatalog.Build(tables, functions)
}
