// Package catalog knows the relations of a backend database: their columns
// and types, kind, owner and root parent, and resolves names the way
// PostgreSQL does with a search_path.
//
// One Catalog serves one database. It keeps an immutable Snapshot of the
// whole database, loaded with two queries through pgx, and replaces it in the
// background when it is older than the TTL. A name that is not in the
// snapshot forces one synchronous reload (rate limited), so a table created a
// moment ago is found. Every reload that changes something bumps the
// snapshot's Version, which is part of every rewrite-cache key.
package catalog

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Relation kinds, as pg_class.relkind.
const (
	KindTable            = 'r'
	KindPartitionedTable = 'p'
	KindView             = 'v'
	KindMatView          = 'm'
	KindForeignTable     = 'f'
	// KindSequence: a sequence is read like a one-row table (SELECT
	// last_value, is_called FROM s, as pg_dump does) and governed as a
	// Ranger table resource of its own (docs/clients.md "pg_dump: a
	// masked dump").
	KindSequence = 'S'
)

// Relation is one table-like object.
type Relation struct {
	OID    uint32
	Schema string
	Name   string
	Kind   byte
	Owner  string
	// RootSchema/RootName name the topmost inheritance or partition ancestor,
	// whose policies govern this relation; they equal Schema/Name for a root.
	RootSchema, RootName string
	// MultipleRoots is set for a child with more than one inheritance root;
	// the rewriter denies it rather than pick one root's policies.
	MultipleRoots bool
	// HasChildren: some relation inherits from this one (or is its
	// partition), so a scan without ONLY reads their rows too.
	HasChildren bool
	Columns     []Column
	// ViewDef is a view's defining SELECT (pg_get_viewdef, rendered with
	// only pg_catalog on the search_path so every other name is
	// schema-qualified); "" for other kinds.
	ViewDef string
	// StoredMasks are the stored generated columns verified to hold
	// exactly pgranger's mask of another column (storedmask.go); nil for
	// most relations.
	StoredMasks []StoredMask
	// StoredMaskColumns are the candidate stored-mask columns (named by
	// the convention, verified or not), by index in Columns; nil when none.
	StoredMaskColumns map[int]StoredMaskCandidate

	colIndex map[string]int
}

// Column is one user column (attnum > 0, not dropped), in attnum order.
type Column struct {
	Name     string
	Num      int16
	TypeOID  uint32
	BaseOID  uint32 // base type for domains, else TypeOID
	TypMod   int32
	TypeName string // format_type(atttypid, atttypmod)
	// Collation is attcollation (0 for types without one).
	Collation uint32
	// Generated is, for a STORED generated column, PostgreSQL's deparse
	// of its expression (pg_get_expr(adbin, adrelid)); "" otherwise.
	Generated string
}

// Column returns the named column (exact, case-sensitive, as PostgreSQL
// stores identifiers after folding).
func (r *Relation) Column(name string) (*Column, bool) {
	i, ok := r.colIndex[name]
	if !ok {
		return nil, false
	}
	return &r.Columns[i], true
}

// IsSystem reports whether the relation lives in pg_catalog or
// information_schema, which Ranger does not govern (docs/policy-semantics.md,
// "Resources").
func (r *Relation) IsSystem() bool { return IsSystemSchema(r.Schema) }

// IsSystemSchema reports whether schema is pg_catalog or information_schema.
func IsSystemSchema(schema string) bool {
	return schema == "pg_catalog" || schema == "information_schema"
}

// Snapshot is an immutable view of one database's relations.
type Snapshot struct {
	Version        uint64
	LoadedAt       time.Time
	ServerEncoding string
	HasICU         bool // the "und-x-icu" collation exists (needed by masks)
	// Builtins are the operators, functions and types the barrier rule
	// reasons about (builtins.go).
	Builtins *Builtins

	byQualified map[string]*Relation // schema + "." + name
	schemas     map[string]bool
	catalogFunc map[string]bool // function names in pg_catalog
}

// Lookup finds schema.name exactly.
func (s *Snapshot) Lookup(schema, name string) (*Relation, bool) {
	r, ok := s.byQualified[schema+"."+name]
	return r, ok
}

// SchemaExists reports whether a schema of that name exists.
func (s *Snapshot) SchemaExists(schema string) bool { return s.schemas[schema] }

// IsCatalogFunction reports whether pg_catalog has a function of that name.
func (s *Snapshot) IsCatalogFunction(name string) bool { return s.catalogFunc[name] }

// Resolve finds an unqualified relation name the way PostgreSQL's
// RangeVarGetRelid does: pg_catalog first unless the path lists it, then
// each schema of the path. "$user" stands for sessionUser. Temporary schemas
// are not searched: pgranger does not let sessions create temporary
// relations, so none can shadow a name.
func (s *Snapshot) Resolve(name string, searchPath []string, sessionUser string) (*Relation, bool) {
	for _, schema := range EffectivePath(searchPath, sessionUser) {
		if r, ok := s.Lookup(schema, name); ok {
			return r, true
		}
	}
	return nil, false
}

// EffectivePath is the list of schemas PostgreSQL searches for a path:
// pg_catalog first when the path does not name it, "$user" replaced,
// pg_temp dropped (see Resolve).
func EffectivePath(searchPath []string, sessionUser string) []string {
	out := make([]string, 0, len(searchPath)+1)
	hasCatalog := false
	for _, p := range searchPath {
		if p == "pg_catalog" {
			hasCatalog = true
		}
	}
	if !hasCatalog {
		out = append(out, "pg_catalog")
	}
	for _, p := range searchPath {
		switch p {
		case "$user":
			out = append(out, sessionUser)
		case "pg_temp":
		default:
			out = append(out, p)
		}
	}
	return out
}

// Catalog loads and caches Snapshots of one database.
type Catalog struct {
	pool *pgxpool.Pool
	ttl  time.Duration
	opts Options
	// verified caches stored-mask verdicts by everything they depend on
	// (storedmask.go), so a reload does not repeat the check.
	verified map[string]bool

	snap atomic.Pointer[Snapshot]

	mu         sync.Mutex // serialises loads; guards lastForced and lastLoadBegan
	lastForced time.Time
	// lastLoadBegan is when the newest completed load began: its snapshot
	// sees everything committed before then.
	lastLoadBegan time.Time
	version       atomic.Uint64
	lastHash      uint64
	refreshing    atomic.Bool
	loadTimeout   time.Duration
}

// Options are optional catalog settings.
type Options struct {
	// StoredMasks builds pgranger's mask expressions so that stored
	// generated columns holding them can be verified (storedmask.go);
	// nil: no stored masks are used.
	StoredMasks StoredMaskBuilder
}

// Open connects a small pgx pool to database for catalog queries and loads
// the first snapshot. dsn is the backend DSN; database overrides its dbname.
func Open(ctx context.Context, dsn, database string, ttl time.Duration) (*Catalog, error) {
	return OpenWith(ctx, dsn, database, ttl, Options{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, dsn, database string, ttl time.Duration, opts Options) (*Catalog, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.Database = database
	cfg.MaxConns = 2
	cfg.ConnConfig.RuntimeParams["application_name"] = "pgranger catalog"
	// With only pg_catalog searched, format_type and pg_get_viewdef
	// schema-qualify every other type and relation they name.
	cfg.ConnConfig.RuntimeParams["search_path"] = "pg_catalog"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	c := &Catalog{pool: pool, ttl: ttl, opts: opts, loadTimeout: 30 * time.Second, verified: map[string]bool{}}
	if _, err := c.load(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return c, nil
}

// Close releases the catalog's connections.
func (c *Catalog) Close() { c.pool.Close() }

// Current returns the newest snapshot and starts a background reload when it
// is older than the TTL. It never waits on the database.
func (c *Catalog) Current() *Snapshot {
	s := c.snap.Load()
	if time.Since(s.LoadedAt) > c.ttl && c.refreshing.CompareAndSwap(false, true) {
		go func() {
			defer c.refreshing.Store(false)
			ctx, cancel := context.WithTimeout(context.Background(), c.loadTimeout)
			defer cancel()
			c.load(ctx) // on failure the old snapshot stays; the next call retries
		}()
	}
	return s
}

// Refresh returns a snapshot loaded after the call began, which is what
// the rewriter needs when a name is missing (a table created a moment
// ago). Forced reloads are at most one per minInterval, so clients naming
// missing relations cannot make the catalog reload more often: within the
// interval Refresh waits for its end, unless a reload that began after
// this call has completed meanwhile (then that snapshot is fresh enough).
// Before, a second missing name within the interval got the old snapshot,
// so CREATE TABLE a …; INSERT INTO a …; CREATE TABLE b …; INSERT INTO b
// failed on b.
func (c *Catalog) Refresh(ctx context.Context, minInterval time.Duration) (*Snapshot, error) {
	asked := time.Now()
	for {
		c.mu.Lock()
		if c.lastLoadBegan.After(asked) {
			c.mu.Unlock()
			return c.snap.Load(), nil
		}
		wait := minInterval - time.Since(c.lastForced)
		if wait <= 0 {
			c.lastForced = time.Now()
			c.mu.Unlock()
			return c.load(ctx)
		}
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return c.snap.Load(), ctx.Err()
		case <-time.After(wait):
		}
	}
}

const relationsSQL = `
WITH RECURSIVE up(child, parent, depth) AS (
    SELECT inhrelid, inhparent, 1 FROM pg_catalog.pg_inherits
  UNION ALL
    SELECT up.child, i.inhparent, up.depth + 1
    FROM up JOIN pg_catalog.pg_inherits i ON i.inhrelid = up.parent
    WHERE up.depth < 64
), roots AS (
    SELECT up.child, up.parent FROM up
    WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_inherits i WHERE i.inhrelid = up.parent)
)
SELECT c.oid, n.nspname, c.relname, c.relkind::text, pg_catalog.pg_get_userbyid(c.relowner),
       coalesce((SELECT array_agg(DISTINCT rn.nspname || '.' || rc.relname)
                 FROM roots r JOIN pg_catalog.pg_class rc ON rc.oid = r.parent
                 JOIN pg_catalog.pg_namespace rn ON rn.oid = rc.relnamespace
                 WHERE r.child = c.oid), '{}'),
       CASE WHEN c.relkind = 'v' THEN pg_catalog.pg_get_viewdef(c.oid) ELSE '' END,
       EXISTS (SELECT 1 FROM pg_catalog.pg_inherits i WHERE i.inhparent = c.oid)
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r','p','v','m','f','S')
  AND n.nspname !~ '^pg_temp_' AND n.nspname !~ '^pg_toast'
ORDER BY c.oid`

const columnsSQL = `
SELECT a.attrelid, a.attname, a.attnum, a.atttypid,
       CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE a.atttypid END,
       a.atttypmod, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attcollation,
       CASE WHEN a.attgenerated = 's' THEN coalesce(pg_catalog.pg_get_expr(d.adbin, d.adrelid), '') ELSE '' END
FROM pg_catalog.pg_attribute a
JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r','p','v','m','f','S')
  AND n.nspname !~ '^pg_temp_' AND n.nspname !~ '^pg_toast'
ORDER BY a.attrelid, a.attnum`

const miscSQL = `
SELECT current_setting('server_encoding'),
       EXISTS (SELECT 1 FROM pg_catalog.pg_collation WHERE collname = 'und-x-icu'),
       ARRAY(SELECT nspname::text FROM pg_catalog.pg_namespace),
       ARRAY(SELECT DISTINCT proname::text FROM pg_catalog.pg_proc WHERE pronamespace = 'pg_catalog'::regnamespace)`

func (c *Catalog) load(ctx context.Context) (*Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	began := time.Now()
	tx, err := c.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	defer tx.Rollback(ctx)

	h := fnv.New64a()
	s := &Snapshot{
		LoadedAt:    time.Now(),
		byQualified: map[string]*Relation{},
		schemas:     map[string]bool{},
		catalogFunc: map[string]bool{},
	}
	var schemas, funcs []string
	if err := tx.QueryRow(ctx, miscSQL).Scan(&s.ServerEncoding, &s.HasICU, &schemas, &funcs); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	for _, n := range schemas {
		s.schemas[n] = true
		fmt.Fprintf(h, "s%s\x00", n)
	}
	for _, f := range funcs {
		s.catalogFunc[f] = true
	}

	if s.Builtins, err = loadBuiltins(ctx, tx, h); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}

	byOID := map[uint32]*Relation{}
	rows, err := tx.Query(ctx, relationsSQL)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	for rows.Next() {
		r := &Relation{colIndex: map[string]int{}}
		var kind string
		var roots []string
		if err := rows.Scan(&r.OID, &r.Schema, &r.Name, &kind, &r.Owner, &roots, &r.ViewDef, &r.HasChildren); err != nil {
			rows.Close()
			return nil, fmt.Errorf("catalog: %w", err)
		}
		r.Kind = kind[0]
		r.RootSchema, r.RootName = r.Schema, r.Name
		switch len(roots) {
		case 0:
		case 1:
			r.RootSchema, r.RootName, _ = strings.Cut(roots[0], ".")
		default:
			r.MultipleRoots = true
		}
		fmt.Fprintf(h, "r%d\x00%s\x00%s\x00%c\x00%s\x00%v\x00%s\x00%t\x00", r.OID, r.Schema, r.Name, r.Kind, r.Owner, roots, r.ViewDef, r.HasChildren)
		byOID[r.OID] = r
		s.byQualified[r.Schema+"."+r.Name] = r
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}

	rows, err = tx.Query(ctx, columnsSQL)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	for rows.Next() {
		var rel uint32
		var col Column
		if err := rows.Scan(&rel, &col.Name, &col.Num, &col.TypeOID, &col.BaseOID, &col.TypMod, &col.TypeName, &col.Collation, &col.Generated); err != nil {
			rows.Close()
			return nil, fmt.Errorf("catalog: %w", err)
		}
		fmt.Fprintf(h, "c%d\x00%s\x00%d\x00%d\x00%d\x00%s\x00%d\x00%s\x00", rel, col.Name, col.TypeOID, col.BaseOID, col.TypMod, col.TypeName, col.Collation, col.Generated)
		if r, ok := byOID[rel]; ok {
			r.colIndex[col.Name] = len(r.Columns)
			r.Columns = append(r.Columns, col)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	tx.Rollback(ctx)

	// Stored masks are verified after the read-only transaction (the
	// check creates a temporary table); what was verified is part of the
	// version, so a rewrite cached under another verdict is not reused.
	c.verifyStoredMasks(ctx, byOID, h)

	sum := h.Sum64()
	if old := c.snap.Load(); old == nil || sum != c.lastHash {
		s.Version = c.version.Add(1)
	} else {
		s.Version = old.Version
	}
	c.lastHash = sum
	c.snap.Store(s)
	c.lastLoadBegan = began
	return s, nil
}

// Static builds a snapshot from given relations, for tests and offline
// tools (`pgranger check`) that have no backend. Column indexes are built
// here; schemas are taken from the relations plus the system schemas.
func Static(version uint64, rels []*Relation, catalogFuncs []string) *Snapshot {
	s := &Snapshot{
		Version:        version,
		LoadedAt:       time.Now(),
		ServerEncoding: "UTF8",
		HasICU:         true,
		Builtins:       defaultBuiltins,
		byQualified:    map[string]*Relation{},
		schemas:        map[string]bool{"pg_catalog": true, "information_schema": true, "public": true},
		catalogFunc:    map[string]bool{},
	}
	for _, r := range rels {
		r.colIndex = make(map[string]int, len(r.Columns))
		for i, col := range r.Columns {
			r.colIndex[col.Name] = i
		}
		if r.RootName == "" {
			r.RootSchema, r.RootName = r.Schema, r.Name
		}
		// Stored masks are taken as given (a test's claim: nothing here
		// can verify them); candidates follow from the names.
		r.StoredMaskColumns = storedMaskCandidates(r)
		for _, m := range r.StoredMasks {
			if r.StoredMaskColumns == nil {
				r.StoredMaskColumns = map[int]StoredMaskCandidate{}
			}
			r.StoredMaskColumns[m.Stored] = StoredMaskCandidate{Base: m.Base, MaskType: m.MaskType, Verified: true, Expr: m.Expr}
		}
		s.byQualified[r.Schema+"."+r.Name] = r
		s.schemas[r.Schema] = true
	}
	for _, f := range catalogFuncs {
		s.catalogFunc[f] = true
	}
	return s
}
