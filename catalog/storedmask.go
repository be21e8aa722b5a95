package catalog

// Stored masks (docs/masks.md, "Stored masks").
//
// An operator may add to a governed table a STORED generated column that
// holds exactly the masked value pgranger computes for another column; the
// rewriter then reads that column instead of evaluating the mask on every
// row. The column is named <column>__pgranger_<mask type, lower case>
// (StoredMaskColumnName) and is used only when PostgreSQL itself says its
// generation expression is the one pgranger would emit:
//
//	pg_get_expr(adbin, adrelid) of the stored column
//	  ==
//	pg_get_expr(adbin, adrelid) of a column pgranger adds, with its own
//	expression, to a temporary copy (CREATE TEMP TABLE … (LIKE t)) of the
//	table, in a transaction that is rolled back
//
// and the two columns have the same type, typmod and collation. Both sides
// go through the same parse analysis and the same deparser, with the same
// search_path, so equal text means equal expression trees as far as
// ruleutils can tell them apart. EXPLAIN VERBOSE, which needs no DDL, was
// not used: the planner turns COLLATE into a relabelling that EXPLAIN
// prints without the collation, so a column computed under "C" where the
// mask needs "und-x-icu" would deparse the same (docs/decisions.md).
// Any error, mismatch or doubt leaves the column unverified, and the
// rewriter computes the mask as without it.

import (
	"context"
	"fmt"
	"hash"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/pgranger/pgranger/ranger"
)

// StoredMaskBuilder returns the SQL text of the mask expression pgranger
// emits for maskType over col, read as colRef (the quoted column name);
// ok is false for a mask that cannot be stored (a typed NULL, a type the
// mask does not take, a user- or session-dependent mask).
type StoredMaskBuilder func(maskType string, col Column, colRef string) (expr string, ok bool)

// StoredMaskTypes are the mask types a stored column can hold: those that
// depend only on the column's value and that PostgreSQL accepts in a
// generation expression. MASK_NULL is a constant (nothing to save),
// MASK_NONE nothing, CUSTOM may depend on the user or session, and
// MASK_HASH calls convert_to(), which is STABLE, so PostgreSQL refuses it
// ("generation expression is not immutable").
var StoredMaskTypes = []string{ranger.MaskTypeMask, ranger.MaskTypeShowLast4, ranger.MaskTypeShowFirst4, ranger.MaskTypeDateShowYear}

const storedMaskInfix = "__pgranger_"

// MaxIdentifierBytes is PostgreSQL's NAMEDATALEN - 1: a longer name is
// truncated, and would then not follow the convention.
const MaxIdentifierBytes = 63

// StoredMaskColumnName is the name of the stored column that holds the
// mask maskType of column base.
func StoredMaskColumnName(base, maskType string) string {
	return base + storedMaskInfix + strings.ToLower(maskType)
}

// ParseStoredMaskColumnName splits a stored-mask column name into the
// masked column's name and the mask type.
func ParseStoredMaskColumnName(name string) (base, maskType string, ok bool) {
	i := strings.LastIndex(name, storedMaskInfix)
	if i <= 0 {
		return "", "", false
	}
	suffix := name[i+len(storedMaskInfix):]
	for _, t := range StoredMaskTypes {
		if suffix == strings.ToLower(t) {
			return name[:i], t, true
		}
	}
	return "", "", false
}

// StoredMask is a verified stored mask: column Stored holds exactly Expr,
// pgranger's mask MaskType of column Base.
type StoredMask struct {
	Base, Stored int // indexes in Relation.Columns
	MaskType     string
	Expr         string // the builder's text over the quoted base column, as verified
}

// StoredMaskCandidate is a column that is named like a stored mask of
// another column of its relation, verified or not. The rewriter never lets
// it show more than the user may see of the base column (sqlrewrite).
type StoredMaskCandidate struct {
	Base     int
	MaskType string
	Verified bool
	Expr     string // when Verified
}

// StoredMask returns the verified stored mask maskType of column base.
// Relations without stored masks answer at the cost of a length check.
func (r *Relation) StoredMask(base int, maskType string) (*StoredMask, bool) {
	for i := range r.StoredMasks {
		if m := &r.StoredMasks[i]; m.Base == base && m.MaskType == maskType {
			return m, true
		}
	}
	return nil, false
}

// storedMaskCandidates finds, in a relation, the generated columns named
// like a stored mask of another, non-generated column.
func storedMaskCandidates(r *Relation) map[int]StoredMaskCandidate {
	var out map[int]StoredMaskCandidate
	for i, col := range r.Columns {
		base, mt, ok := ParseStoredMaskColumnName(col.Name)
		if !ok {
			continue
		}
		b, ok := r.colIndex[base]
		if !ok || b == i {
			continue
		}
		if out == nil {
			out = map[int]StoredMaskCandidate{}
		}
		out[i] = StoredMaskCandidate{Base: b, MaskType: mt}
	}
	return out
}

// verifyStoredMasks checks every candidate of every table (see the top
// of this file) and records the verdicts in the relations and in h.
func (c *Catalog) verifyStoredMasks(ctx context.Context, byOID map[uint32]*Relation, h hash.Hash64) {
	type job struct {
		rel    *Relation
		stored int
		cand   StoredMaskCandidate
		expr   string
		key    string
	}
	var jobs []job
	for _, r := range byOID {
		cands := storedMaskCandidates(r)
		if cands == nil {
			continue
		}
		r.StoredMaskColumns = cands
		if c.opts.StoredMasks == nil || (r.Kind != KindTable && r.Kind != KindPartitionedTable) {
			continue
		}
		for i, cand := range cands {
			st, base := r.Columns[i], r.Columns[cand.Base]
			if st.Generated == "" || base.Generated != "" ||
				st.TypeOID != base.TypeOID || st.TypMod != base.TypMod || st.Collation != base.Collation {
				continue
			}
			expr, ok := c.opts.StoredMasks(cand.MaskType, base, quoteIdent(base.Name))
			if !ok {
				continue
			}
			key := strings.Join([]string{strconv.FormatUint(uint64(r.OID), 10), r.Schema, r.Name, st.Name, base.Name,
				st.TypeName, strconv.FormatUint(uint64(st.Collation), 10), st.Generated, expr}, "\x00")
			jobs = append(jobs, job{r, i, cand, expr, key})
		}
	}
	if len(jobs) == 0 {
		return
	}
	var tx pgx.Tx
	var txErr error
	for _, j := range jobs {
		ok, cached := c.verified[j.key]
		if !cached {
			if tx == nil && txErr == nil {
				if tx, txErr = c.beginCheck(ctx); txErr == nil {
					defer tx.Rollback(ctx)
				}
			}
			ok = false // no transaction for the check: not verified this time
			if txErr == nil {
				var err error
				ok, err = checkStoredMask(ctx, tx, j.rel, j.rel.Columns[j.stored], j.expr)
				if err == nil {
					c.verified[j.key] = ok // errors are not cached: retried next load
				}
			}
		}
		if !ok {
			continue
		}
		cand := j.cand
		cand.Verified, cand.Expr = true, j.expr
		j.rel.StoredMaskColumns[j.stored] = cand
		j.rel.StoredMasks = append(j.rel.StoredMasks, StoredMask{Base: cand.Base, Stored: j.stored, MaskType: cand.MaskType, Expr: j.expr})
	}
	dropUnsharedStoredMasks(byOID)
	// The verdicts enter the version, in a fixed order.
	var keys []string
	for _, j := range jobs {
		if _, ok := j.rel.StoredMask(j.cand.Base, j.cand.MaskType); ok {
			keys = append(keys, j.key)
		}
		sort.Slice(j.rel.StoredMasks, func(a, b int) bool { return j.rel.StoredMasks[a].Stored < j.rel.StoredMasks[b].Stored })
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "m%s\x00", k)
	}
	if len(c.verified) > 4096 {
		c.verified = map[string]bool{} // bounded: verdicts of dropped columns go
	}
}

// beginCheck starts the read-write transaction the checks run in; it is
// always rolled back, and waits at most briefly for locks.
func (c *Catalog) beginCheck(ctx context.Context) (pgx.Tx, error) {
	tx, err := c.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadWrite})
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '2s'"); err != nil {
		tx.Rollback(ctx)
		return nil, err
	}
	return tx, nil
}

// checkStoredMask deparses expr as a generated column of a temporary copy
// of rel and compares it with the stored column's. It runs in a savepoint
// so a failure leaves the transaction usable; a failure is an error, a
// mismatch is false.
func checkStoredMask(ctx context.Context, tx pgx.Tx, rel *Relation, stored Column, expr string) (bool, error) {
	sp, err := tx.Begin(ctx) // SAVEPOINT
	if err != nil {
		return false, err
	}
	defer sp.Rollback(ctx) // ROLLBACK TO SAVEPOINT: the temporary table goes
	const tmp = "pg_temp.pgranger_stored_mask_check"
	if _, err := sp.Exec(ctx, "CREATE TEMP TABLE pgranger_stored_mask_check (LIKE "+quoteIdent(rel.Schema)+"."+quoteIdent(rel.Name)+")"); err != nil {
		return false, err
	}
	if _, err := sp.Exec(ctx, "ALTER TABLE "+tmp+" ADD COLUMN pgranger_expected "+stored.TypeName+
		" GENERATED ALWAYS AS ("+expr+") STORED"); err != nil {
		return false, err
	}
	var got string
	var coll uint32
	if err := sp.QueryRow(ctx, `
SELECT coalesce(pg_catalog.pg_get_expr(d.adbin, d.adrelid), ''), a.attcollation
FROM pg_catalog.pg_attribute a
JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = '`+tmp+`'::pg_catalog.regclass AND a.attname = 'pgranger_expected' AND a.attgenerated = 's'`).Scan(&got, &coll); err != nil {
		return false, err
	}
	return got != "" && got == stored.Generated && coll == stored.Collation, nil
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// dropUnsharedStoredMasks keeps a stored mask of a relation with children
// only when every relation below it holds the same verified stored mask:
// a scan without ONLY reads their rows through the parent's column, and
// since PostgreSQL 16 a child may compute a generated column with an
// expression of its own. The catalog knows each relation's topmost root,
// so a root is checked against every relation under it; an intermediate
// parent keeps none (its subtree is not known here).
func dropUnsharedStoredMasks(byOID map[uint32]*Relation) {
	var under map[string][]*Relation
	for _, r := range byOID {
		if r.RootSchema != r.Schema || r.RootName != r.Name {
			if under == nil {
				under = map[string][]*Relation{}
			}
			k := r.RootSchema + "." + r.RootName
			under[k] = append(under[k], r)
		}
	}
	for _, r := range byOID {
		if !r.HasChildren || len(r.StoredMasks) == 0 {
			continue
		}
		root := r.RootSchema == r.Schema && r.RootName == r.Name
		kept := r.StoredMasks[:0]
		for _, m := range r.StoredMasks {
			ok := root
			name := r.Columns[m.Stored].Name
			for _, d := range under[r.Schema+"."+r.Name] {
				if !ok {
					break
				}
				i, has := d.colIndex[name]
				dm, verified := d.StoredMask(d.colIndex[r.Columns[m.Base].Name], m.MaskType)
				ok = has && verified && dm.Stored == i && dm.Expr == m.Expr
			}
			if ok {
				kept = append(kept, m)
				continue
			}
			c := r.StoredMaskColumns[m.Stored]
			c.Verified, c.Expr = false, ""
			r.StoredMaskColumns[m.Stored] = c
		}
		r.StoredMasks = kept
	}
}

// Relations returns the snapshot's relations ordered by schema and name.
func (s *Snapshot) Relations() []*Relation {
	out := make([]*Relation, 0, len(s.byQualified))
	for _, r := range s.byQualified {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Schema != out[j].Schema {
			return out[i].Schema < out[j].Schema
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// ColumnIndex returns the index in Columns of the named column.
func (r *Relation) ColumnIndex(name string) (int, bool) {
	i, ok := r.colIndex[name]
	return i, ok
}
