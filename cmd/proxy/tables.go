package main

import (
	_ "embed"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/pgranger/pgranger/catalog"
)

// Table declarations: the catalog `pgranger test` (SQL cases) and
// `pgranger check --catalog` use instead of a backend. The same YAML shape
// serves both:
//
//	catalog:
//	  - table: sales.orders          # schema.table ("public" when unqualified)
//	    owner: postgres              # for {OWNER}; default "postgres"
//	    kind: table                  # table (default), partitioned, view, matview, foreign
//	    parent: sales.orders         # root parent of a partition or inheritance child
//	    definition: SELECT …         # a view's defining SELECT, names schema-qualified
//	    columns:
//	      - id integer               # "name type", or {name: …, type: …}
//	      - amount numeric(12,2)
//	      - '"e-mail" text'          # a double-quoted name keeps its case and characters
//	functions: [my_builtin]          # pg_catalog function names beyond PostgreSQL 15's

type tableDecl struct {
	Table      string       `yaml:"table"`
	Owner      string       `yaml:"owner"`
	Kind       string       `yaml:"kind"`
	Parent     string       `yaml:"parent"`
	Definition string       `yaml:"definition"`
	Columns    []columnDecl `yaml:"columns"`
}

type columnDecl struct {
	Name string `yaml:"name"`
	Type string `yaml:"type"`
}

// UnmarshalYAML accepts "name type" or {name: …, type: …}.
func (c *columnDecl) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		name, typ, err := splitColumn(n.Value)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		c.Name, c.Type = name, typ
		return nil
	}
	if err := checkKeys(n, "name", "type"); err != nil {
		return err
	}
	type plain columnDecl
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	if p.Name == "" || p.Type == "" {
		return fmt.Errorf("line %d: a column needs a name and a type", n.Line)
	}
	*c = columnDecl(p)
	return nil
}

// checkKeys rejects keys a mapping node may not have (Node.Decode does
// not apply the decoder's KnownFields).
func checkKeys(n *yaml.Node, allowed ...string) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: want a mapping", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		ok := false
		for _, a := range allowed {
			if k.Value == a {
				ok = true
			}
		}
		if !ok {
			return fmt.Errorf("line %d: field %s not found (want %s)", k.Line, k.Value, strings.Join(allowed, ", "))
		}
	}
	return nil
}

func splitColumn(s string) (name, typ string, err error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, `"`) {
		end := strings.Index(s[1:], `"`)
		if end < 0 {
			return "", "", fmt.Errorf("column %q: unterminated quoted name", s)
		}
		name, typ = s[1:1+end], strings.TrimSpace(s[2+end:])
	} else {
		var ok bool
		name, typ, ok = strings.Cut(s, " ")
		if !ok {
			return "", "", fmt.Errorf("column %q: want \"name type\"", s)
		}
		name, typ = strings.ToLower(name), strings.TrimSpace(typ)
	}
	if name == "" || typ == "" {
		return "", "", fmt.Errorf("column %q: want \"name type\"", s)
	}
	return name, typ, nil
}

// splitQualified reads schema.table, either part double-quoted.
func splitQualified(s string) (schema, name string, err error) {
	var parts []string
	rest := strings.TrimSpace(s)
	for rest != "" {
		var part string
		if strings.HasPrefix(rest, `"`) {
			end := strings.Index(rest[1:], `"`)
			if end < 0 {
				return "", "", fmt.Errorf("%q: unterminated quoted name", s)
			}
			part, rest = rest[1:1+end], rest[2+end:]
		} else {
			i := strings.IndexByte(rest, '.')
			if i < 0 {
				i = len(rest)
			}
			part, rest = strings.ToLower(rest[:i]), rest[i:]
		}
		parts = append(parts, part)
		if rest == "" {
			break
		}
		if rest[0] != '.' {
			return "", "", fmt.Errorf("%q: want schema.table", s)
		}
		rest = rest[1:]
	}
	switch len(parts) {
	case 1:
		return "public", parts[0], nil
	case 2:
		return parts[0], parts[1], nil
	}
	return "", "", fmt.Errorf("%q: want schema.table", s)
}

var relKinds = map[string]byte{
	"": catalog.KindTable, "table": catalog.KindTable, "partitioned": catalog.KindPartitionedTable,
	"view": catalog.KindView, "matview": catalog.KindMatView, "materialized view": catalog.KindMatView,
	"foreign": catalog.KindForeignTable, "foreign table": catalog.KindForeignTable,
	"sequence": catalog.KindSequence,
}

// buildCatalog makes a static snapshot of the declared tables plus
// PostgreSQL's pg_catalog function names.
func buildCatalog(tables []tableDecl, extraFuncs []string) (*catalog.Snapshot, error) {
	var rels []*catalog.Relation
	seen := map[string]bool{}
	for i, t := range tables {
		schema, name, err := splitQualified(t.Table)
		if err != nil {
			return nil, fmt.Errorf("catalog entry %d: %w", i+1, err)
		}
		key := schema + "." + name
		if seen[key] {
			return nil, fmt.Errorf("catalog: %s is declared twice", key)
		}
		seen[key] = true
		kind, ok := relKinds[strings.ToLower(t.Kind)]
		if !ok {
			return nil, fmt.Errorf("catalog: %s: kind %q: want table, partitioned, view, matview or foreign", key, t.Kind)
		}
		rel := &catalog.Relation{OID: uint32(16384 + i), Schema: schema, Name: name, Kind: kind, Owner: t.Owner, ViewDef: strings.TrimSpace(t.Definition)}
		switch {
		case kind == catalog.KindView && rel.ViewDef == "":
			return nil, fmt.Errorf("catalog: %s: a view needs its definition (its SELECT, with schema-qualified names)", key)
		case kind != catalog.KindView && rel.ViewDef != "":
			return nil, fmt.Errorf("catalog: %s: only a view has a definition", key)
		}
		if rel.Owner == "" {
			rel.Owner = "postgres"
		}
		if t.Parent != "" {
			if rel.RootSchema, rel.RootName, err = splitQualified(t.Parent); err != nil {
				return nil, fmt.Errorf("catalog: %s: parent: %w", key, err)
			}
		}
		if len(t.Columns) == 0 {
			return nil, fmt.Errorf("catalog: %s has no columns", key)
		}
		cols := map[string]bool{}
		for j, c := range t.Columns {
			if cols[c.Name] {
				return nil, fmt.Errorf("catalog: %s: column %s is declared twice", key, c.Name)
			}
			cols[c.Name] = true
			oid, typmod, typeName, err := resolveType(c.Type)
			if err != nil {
				return nil, fmt.Errorf("catalog: %s.%s: %w", key, c.Name, err)
			}
			rel.Columns = append(rel.Columns, catalog.Column{Name: c.Name, Num: int16(j + 1), TypeOID: oid, BaseOID: oid, TypMod: typmod, TypeName: typeName})
		}
		rels = append(rels, rel)
	}
	return catalog.Static(1, rels, append(pgCatalogFunctions(), extraFuncs...)), nil
}

//go:embed pgcatalog_functions.txt
var pgCatalogFunctionList string

// pgCatalogFunctions are the function names in pg_catalog of PostgreSQL 15
// (SELECT DISTINCT proname FROM pg_proc WHERE pronamespace =
// 'pg_catalog'::regnamespace), which a static catalog cannot ask a backend
// for.
func pgCatalogFunctions() []string { return strings.Fields(pgCatalogFunctionList) }

type pgType struct {
	oid  uint32
	name string // format_type's spelling
}

var pgTypes = map[string]pgType{
	"boolean": {16, "boolean"}, "bool": {16, "boolean"},
	"bytea": {17, "bytea"}, "name": {19, "name"},
	"bigint": {20, "bigint"}, "int8": {20, "bigint"},
	"smallint": {21, "smallint"}, "int2": {21, "smallint"},
	"integer": {23, "integer"}, "int": {23, "integer"}, "int4": {23, "integer"},
	"text": {25, "text"}, "oid": {26, "oid"}, "json": {114, "json"}, "xml": {142, "xml"},
	"real": {700, "real"}, "float4": {700, "real"},
	"double precision": {701, "double precision"}, "float8": {701, "double precision"}, "float": {701, "double precision"},
	"money": {790, "money"}, "inet": {869, "inet"}, "cidr": {650, "cidr"}, "macaddr": {829, "macaddr"},
	"date": {1082, "date"},
	"time": {1083, "time without time zone"}, "time without time zone": {1083, "time without time zone"},
	"timetz": {1266, "time with time zone"}, "time with time zone": {1266, "time with time zone"},
	"timestamp": {1114, "timestamp without time zone"}, "timestamp without time zone": {1114, "timestamp without time zone"},
	"timestamptz": {1184, "timestamp with time zone"}, "timestamp with time zone": {1184, "timestamp with time zone"},
	"interval": {1186, "interval"}, "uuid": {2950, "uuid"}, "jsonb": {3802, "jsonb"},
	"text[]": {1009, "text[]"}, "integer[]": {1007, "integer[]"}, "int[]": {1007, "integer[]"}, "int4[]": {1007, "integer[]"},
	"bigint[]": {1016, "bigint[]"}, "int8[]": {1016, "bigint[]"},
}

var reTypeMod = regexp.MustCompile(`^([a-z ]+?)\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)$`)

// resolveType maps a type as written in SQL onto its OID, typmod and
// format_type spelling.
func resolveType(s string) (oid uint32, typmod int32, name string, err error) {
	t := strings.Join(strings.Fields(strings.ToLower(s)), " ")
	if pt, ok := pgTypes[t]; ok {
		return pt.oid, -1, pt.name, nil
	}
	switch t {
	case "varchar", "character varying":
		return 1043, -1, "character varying", nil
	case "char", "character", "bpchar":
		return 1042, 5, "character(1)", nil
	case "numeric", "decimal":
		return 1700, -1, "numeric", nil
	}
	if m := reTypeMod.FindStringSubmatch(t); m != nil {
		a, _ := strconv.Atoi(m[2])
		switch m[1] {
		case "varchar", "character varying":
			if m[3] == "" {
				return 1043, int32(a + 4), fmt.Sprintf("character varying(%d)", a), nil
			}
		case "char", "character", "bpchar":
			if m[3] == "" {
				return 1042, int32(a + 4), fmt.Sprintf("character(%d)", a), nil
			}
		case "numeric", "decimal":
			sc := 0
			if m[3] != "" {
				sc, _ = strconv.Atoi(m[3])
			}
			return 1700, int32(a<<16|sc) + 4, fmt.Sprintf("numeric(%d,%d)", a, sc), nil
		}
	}
	return 0, 0, "", fmt.Errorf("type %q is not known to pgranger's static catalog (use text, varchar(n), char(n), integer, bigint, smallint, numeric(p,s), real, double precision, boolean, date, time, timestamp, timestamptz, interval, uuid, json, jsonb, bytea, text[], …)", s)
}

// catalogFile is a file holding table declarations (`check --catalog`):
// either a decision table or a file with only `catalog:` and `functions:`.
type catalogFile struct {
	Catalog   []tableDecl `yaml:"catalog"`
	Functions []string    `yaml:"functions"`
}

func loadCatalogFile(path string) (*catalog.Snapshot, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f catalogFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(f.Catalog) == 0 {
		return nil, fmt.Errorf("%s: no tables declared under catalog:", path)
	}
	snap, err := buildCatalog(f.Catalog, f.Functions)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return snap, nil
}
