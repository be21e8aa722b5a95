package sqlrewrite

// Stored masks (catalog/storedmask.go, docs/masks.md "Stored masks"): a
// verified stored generated column is read instead of computing the mask,
// and a stored-mask column never shows a user more than the user may see
// of the column it masks.

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
)

// StoredMaskBuilder returns the builder the catalog verifies stored
// columns with: MaskSQL over the quoted column, for string columns only
// (their masks are what costs; an integer or date mask is a few cheap
// nodes) and never for a mask that does not read the column (a typed
// NULL).
func StoredMaskBuilder(opts MaskOptions) catalog.StoredMaskBuilder {
	return func(maskType string, col catalog.Column, colRef string) (string, bool) {
		// Stored columns hold Hive's bytes in the column's type; the spark
		// dialect's masks are text of another shape, so none is verified
		// (and capStoredMasks reads them as NULL).
		if !storedMaskType(col) || opts.Dialect == MaskDialectSpark {
			return "", false
		}
		text, err := MaskSQL(maskType, columnType(col), colRef, opts)
		if err != nil || !strings.Contains(text, colRef) {
			return "", false
		}
		return text, true
	}
}

// StoredMaskBuilder is the builder for this rewriter's mask options.
func (rw *Rewriter) StoredMaskBuilder() catalog.StoredMaskBuilder {
	return StoredMaskBuilder(rw.opts.Mask)
}

// storedMaskType: text, varchar and char(n), not domains over them.
func storedMaskType(col catalog.Column) bool {
	if col.BaseOID != 0 && col.BaseOID != col.TypeOID {
		return false
	}
	switch col.TypeOID {
	case maskOIDText, maskOIDVarchar, maskOIDBpchar:
		return true
	}
	return false
}

// storedMaskRef returns, for the mask text pgranger built for column i of
// rel (over the bare quoted column), the stored column that holds exactly
// that text, as ("stored" COLLATE pg_catalog."default"): the collation the
// computed mask ends in, and an expression rather than a plain column, so
// PostgreSQL reports no table column for it in RowDescription, as for the
// computed mask. nil when there is none.
func storedMaskRef(rel *catalog.Relation, i int, maskType, text string) *pg.Node {
	if len(rel.StoredMasks) == 0 {
		return nil
	}
	sm, ok := rel.StoredMask(i, maskType)
	if !ok || sm.Expr != text {
		return nil
	}
	return &pg.Node{Node: &pg.Node_CollateClause{CollateClause: &pg.CollateClause{
		Arg:      pg.MakeColumnRefNode([]*pg.Node{pg.MakeStrNode(rel.Columns[sm.Stored].Name)}, -1),
		Collname: []*pg.Node{pg.MakeStrNode("pg_catalog"), pg.MakeStrNode("default")},
		Location: -1,
	}}}
}

// capStoredMasks restricts each stored-mask column (named by the
// convention, verified or not) to what the user may see of its base
// column: it shows as Ranger decides only when the user may read the base
// column unmasked, or masked with exactly the mask it holds (verified, and
// built the same way today); otherwise it is a typed NULL (MASK_NULL), as
// if masked so. Ranger policies on the column itself still apply. Without
// this, a policy on "*" would show, say, the first four characters of a
// column the user sees hashed or not at all.
func (r *stmtRewriter) capStoredMasks(p *relPolicy) {
	for s, cand := range p.rel.StoredMaskColumns {
		b := cand.Base
		base, m := p.rel.Columns[b], p.masks[b]
		ok := p.colAccess[b].Allowed && !m.Unmappable
		if ok && m.Type != "" {
			ok = cand.Verified && m.Type == cand.MaskType
			if ok {
				text, err := MaskSQL(m.Type, columnType(base), QuoteIdent(base.Name), r.rw.opts.Mask)
				ok = err == nil && text == cand.Expr
			}
		}
		if ok {
			continue
		}
		p.masks[s] = policy.Mask{Type: ranger.MaskTypeNull, PolicyID: p.masks[s].PolicyID, Unmappable: true}
		p.wrap, p.wrapTrusted = true, true
	}
}
