// Package yamlcatalog reads table declarations written in YAML into a
// static catalog snapshot: the catalog `pgranger test` (SQL cases) and
// `pgranger check --catalog` use instead of a backend.
package yamlcatalog

import (
	_ "embed"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"
	"go.yaml.in/yaml/v3"

	"github.com/pgranger/pgranger/catalog"
)

// The same YAML shape serves both:
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

// Table is one declared relation.
type Table struct {
	Table      string   `yaml:"table"`
	Owner      string   `yaml:"owner"`
	Kind       string   `yaml:"kind"`
	Parent     string   `yaml:"parent"`
	Definition string   `yaml:"definition"`
	Columns    []Column `yaml:"columns"`
}

// Column is one declared column.
type Column struct {
	Name string `yaml:"name"`
	Type string `yaml:"type"`
}

// UnmarshalYAML accepts "name type" or {name: …, type: …}.
func (c *Column) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		name, typ, err := splitColumn(n.Value)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		c.Name, c.Type = name, typ
		return nil
	}
	if err := CheckKeys(n, "name", "type"); err != nil {
		return err
	}
	type plain Column
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	if p.Name == "" || p.Type == "" {
		return fmt.Errorf("line %d: a column needs a name and a type", n.Line)
	}
	*c = Column(p)
	return nil
}

// CheckKeys rejects keys a mapping node may not have (Node.Decode does
// not apply the decoder's KnownFields).
func CheckKeys(n *yaml.Node, allowed ...string) error {
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

// Build makes a static snapshot of the declared tables plus PostgreSQL's
// pg_catalog function names and extraFuncs.
func Build(tables []Table, extraFuncs []string) (*catalog.Snapshot, error) {
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
	return catalog.Static(1, rels, append(PGCatalogFunctions(), extraFuncs...)), nil
}

//go:embed pgcatalog_functions.txt
var pgCatalogFunctionList string

// PGCatalogFunctions are the function names in pg_catalog of PostgreSQL 15
// (SELECT DISTINCT proname FROM pg_proc WHERE pronamespace =
// 'pg_catalog'::regnamespace), which a static catalog cannot ask a backend
// for.
func PGCatalogFunctions() []string { return strings.Fields(pgCatalogFunctionList) }

type pgType struct {
	oid  uint32
	name string // format_type's spelling
}

// moneyOID is money's pg_type OID, which pgtype does not name.
const moneyOID = 790

var pgTypes = map[string]pgType{
	"boolean": {pgtype.BoolOID, "boolean"}, "bool": {pgtype.BoolOID, "boolean"},
	"bytea": {pgtype.ByteaOID, "bytea"}, "name": {pgtype.NameOID, "name"},
	"bigint": {pgtype.Int8OID, "bigint"}, "int8": {pgtype.Int8OID, "bigint"},
	"smallint": {pgtype.Int2OID, "smallint"}, "int2": {pgtype.Int2OID, "smallint"},
	"integer": {pgtype.Int4OID, "integer"}, "int": {pgtype.Int4OID, "integer"}, "int4": {pgtype.Int4OID, "integer"},
	"text": {pgtype.TextOID, "text"}, "oid": {pgtype.OIDOID, "oid"}, "json": {pgtype.JSONOID, "json"}, "xml": {pgtype.XMLOID, "xml"},
	"real": {pgtype.Float4OID, "real"}, "float4": {pgtype.Float4OID, "real"},
	"double precision": {pgtype.Float8OID, "double precision"}, "float8": {pgtype.Float8OID, "double precision"}, "float": {pgtype.Float8OID, "double precision"},
	"money": {moneyOID, "money"}, "inet": {pgtype.InetOID, "inet"}, "cidr": {pgtype.CIDROID, "cidr"}, "macaddr": {pgtype.MacaddrOID, "macaddr"},
	"date": {pgtype.DateOID, "date"},
	"time": {pgtype.TimeOID, "time without time zone"}, "time without time zone": {pgtype.TimeOID, "time without time zone"},
	"timetz": {pgtype.TimetzOID, "time with time zone"}, "time with time zone": {pgtype.TimetzOID, "time with time zone"},
	"timestamp": {pgtype.TimestampOID, "timestamp without time zone"}, "timestamp without time zone": {pgtype.TimestampOID, "timestamp without time zone"},
	"timestamptz": {pgtype.TimestamptzOID, "timestamp with time zone"}, "timestamp with time zone": {pgtype.TimestamptzOID, "timestamp with time zone"},
	"interval": {pgtype.IntervalOID, "interval"}, "uuid": {pgtype.UUIDOID, "uuid"}, "jsonb": {pgtype.JSONBOID, "jsonb"},
	"text[]": {pgtype.TextArrayOID, "text[]"}, "integer[]": {pgtype.Int4ArrayOID, "integer[]"}, "int[]": {pgtype.Int4ArrayOID, "integer[]"}, "int4[]": {pgtype.Int4ArrayOID, "integer[]"},
	"bigint[]": {pgtype.Int8ArrayOID, "bigint[]"}, "int8[]": {pgtype.Int8ArrayOID, "bigint[]"},
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
		return pgtype.VarcharOID, -1, "character varying", nil
	case "char", "character", "bpchar":
		return pgtype.BPCharOID, 5, "character(1)", nil
	case "numeric", "decimal":
		return pgtype.NumericOID, -1, "numeric", nil
	}
	if m := reTypeMod.FindStringSubmatch(t); m != nil {
		a, _ := strconv.Atoi(m[2])
		switch m[1] {
		case "varchar", "character varying":
			if m[3] == "" {
				return pgtype.VarcharOID, int32(a + 4), fmt.Sprintf("character varying(%d)", a), nil
			}
		case "char", "character", "bpchar":
			if m[3] == "" {
				return pgtype.BPCharOID, int32(a + 4), fmt.Sprintf("character(%d)", a), nil
			}
		case "numeric", "decimal":
			sc := 0
			if m[3] != "" {
				sc, _ = strconv.Atoi(m[3])
			}
			return pgtype.NumericOID, int32(a<<16|sc) + 4, fmt.Sprintf("numeric(%d,%d)", a, sc), nil
		}
	}
	return 0, 0, "", fmt.Errorf("type %q is not known to pgranger's static catalog (use text, varchar(n), char(n), integer, bigint, smallint, numeric(p,s), real, double precision, boolean, date, time, timestamp, timestamptz, interval, uuid, json, jsonb, bytea, text[], …)", s)
}

// File is a file holding table declarations (`check --catalog`): either a
// decision table or a file with only `catalog:` and `functions:`.
type File struct {
	Catalog   []Table  `yaml:"catalog"`
	Functions []string `yaml:"functions"`
}

// LoadFile reads a File and builds its snapshot.
func LoadFile(path string) (*catalog.Snapshot, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f File
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(f.Catalog) == 0 {
		return nil, fmt.Errorf("%s: no tables declared under catalog", path)
	}
	snap, err := Build(f.Catalog, f.Functions)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return snap, nil
}
