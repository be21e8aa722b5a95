package main

import "github.com/pgranger/pgranger/catalog/yamlcatalog"

// The decision tables of `pgranger test` (test.go) declare their catalog
// in yamlcatalog's shape; these names keep that file's spelling.
type tableDecl = yamlcatalog.Table

var (
	buildCatalog = yamlcatalog.Build
	checkKeys    = yamlcatalog.CheckKeys
)
