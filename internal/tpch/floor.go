package tpch

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/sqlrewrite"
)

// FloorSchema holds plain views over the tables of Schema with the row
// filters and masks of Policies written in by hand: the cheapest form a
// read-time filter can take (see BuildFloor).
const FloorSchema = "tpch_floor"

// policyRules are the row filters (by table) and masks (by table, then
// column) of Policies.
type policyRules struct {
	filters map[string]string
	masks   map[string]map[string]string
}

func rules() (policyRules, error) {
	var bundle struct {
		Policies []struct {
			PolicyType int `json:"policyType"`
			Resources  map[string]struct {
				Values []string `json:"values"`
			} `json:"resources"`
			RowFilterPolicyItems []struct {
				RowFilterInfo struct {
					FilterExpr string `json:"filterExpr"`
				} `json:"rowFilterInfo"`
			} `json:"rowFilterPolicyItems"`
			DataMaskPolicyItems []struct {
				DataMaskInfo struct {
					DataMaskType string `json:"dataMaskType"`
				} `json:"dataMaskInfo"`
			} `json:"dataMaskPolicyItems"`
		} `json:"policies"`
	}
	r := policyRules{filters: map[string]string{}, masks: map[string]map[string]string{}}
	if err := json.Unmarshal(Policies(), &bundle); err != nil {
		return r, err
	}
	for _, p := range bundle.Policies {
		tables := p.Resources["table"].Values
		switch p.PolicyType {
		case 1: // data mask: one table, one column, one item in this bundle
			cols := p.Resources["column"].Values
			if len(tables) != 1 || len(cols) != 1 || len(p.DataMaskPolicyItems) != 1 {
				return r, fmt.Errorf("tpch: a mask policy on %v %v is not of the one-table, one-column, one-item form", tables, cols)
			}
			if r.masks[tables[0]] == nil {
				r.masks[tables[0]] = map[string]string{}
			}
			r.masks[tables[0]][cols[0]] = p.DataMaskPolicyItems[0].DataMaskInfo.DataMaskType
		case 2: // row filter
			if len(tables) != 1 || len(p.RowFilterPolicyItems) != 1 {
				return r, fmt.Errorf("tpch: a row-filter policy on %v is not of the one-table, one-item form", tables)
			}
			r.filters[tables[0]] = p.RowFilterPolicyItems[0].RowFilterInfo.FilterExpr
		}
	}
	return r, nil
}

// BuildFloor creates schema FloorSchema on conn (a direct superuser
// connection) with one plain view per table of Schema: the table's row
// filter as its WHERE clause, each masked column read from its stored
// mask (a `<column>__pgranger_<mask type>` column) where the table has
// one and computed with pgranger's own mask expression otherwise, the
// stored-mask columns themselves left out. It returns the same rows and
// values as the copies and the governed reads.
//
// A plain view has no barrier: the planner flattens it and pushes and
// orders every predicate as it likes, leakproof or not. So a query on
// these views costs what filtering at read time costs with no barrier at
// all — the floor any row-filter enforcement on the source tables
// (pgranger's rewrite, PostgreSQL's row-level security, security-barrier
// views) reaches at best, since each must read the hidden rows and test
// the filter. It is a benchmark reference only: a governed user reading
// such views directly could make a predicate of theirs tell hidden rows'
// values, which is what pgranger's barrier prevents.
func BuildFloor(ctx context.Context, conn *pgx.Conn, opts sqlrewrite.MaskOptions) error {
	pr, err := rules()
	if err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+FloorSchema); err != nil {
		return err
	}
	for _, t := range Tables {
		view, err := floorView(ctx, conn, t, pr, opts)
		if err != nil {
			return fmt.Errorf("floor view of %s: %w", t, err)
		}
		if _, err := conn.Exec(ctx, view); err != nil {
			return fmt.Errorf("%s: %w", view, err)
		}
	}
	return nil
}

func floorView(ctx context.Context, conn *pgx.Conn, table string, pr policyRules, opts sqlrewrite.MaskOptions) (string, error) {
	rows, err := conn.Query(ctx, `SELECT a.attname, a.atttypid, coalesce(nullif(t.typbasetype, 0), a.atttypid), a.atttypmod, format_type(a.atttypid, a.atttypmod)
		FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
		WHERE a.attrelid = (quote_ident($1) || '.' || quote_ident($2))::regclass AND a.attnum > 0 AND NOT a.attisdropped
		ORDER BY a.attnum`, Schema, table)
	if err != nil {
		return "", err
	}
	type column struct {
		name string
		typ  sqlrewrite.ColumnType
	}
	var cols []column
	have := map[string]bool{}
	for rows.Next() {
		var c column
		if err := rows.Scan(&c.name, &c.typ.OID, &c.typ.BaseOID, &c.typ.TypMod, &c.typ.SQLName); err != nil {
			rows.Close()
			return "", err
		}
		have[c.name] = true
		cols = append(cols, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", err
	}
	var list []string
	for _, c := range cols {
		if _, _, stored := catalog.ParseStoredMaskColumnName(c.name); stored {
			continue
		}
		ref := pgx.Identifier{c.name}.Sanitize()
		maskType, masked := pr.masks[table][c.name]
		switch {
		case !masked:
			list = append(list, ref)
		case have[catalog.StoredMaskColumnName(c.name, maskType)]:
			list = append(list, pgx.Identifier{catalog.StoredMaskColumnName(c.name, maskType)}.Sanitize()+" AS "+ref)
		default:
			expr, err := sqlrewrite.MaskSQL(maskType, c.typ, ref, opts)
			if err != nil {
				return "", err
			}
			list = append(list, expr+" AS "+ref)
		}
	}
	view := fmt.Sprintf("CREATE VIEW %s.%s AS SELECT %s FROM %s.%s", FloorSchema, pgx.Identifier{table}.Sanitize(),
		strings.Join(list, ", "), Schema, pgx.Identifier{table}.Sanitize())
	if f, ok := pr.filters[table]; ok {
		view += " WHERE " + f
	}
	return view, nil
}
