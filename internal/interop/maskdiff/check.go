package maskdiff

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pgranger/pgranger/internal/interop"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/sqlrewrite"
)

// Masks are the Ranger mask types of the hive service-def, each compared
// on every column type. CUSTOM's value expression is pgranger's own SQL
// (a PostgreSQL expression, not HiveQL), so what is compared of it is the
// part both engines do: the cast of the expression's result back to the
// column type (Customs).
var Masks = []string{
	ranger.MaskTypeMask, ranger.MaskTypeShowLast4, ranger.MaskTypeShowFirst4, ranger.MaskTypeHash,
	ranger.MaskTypeNull, ranger.MaskTypeNone, ranger.MaskTypeDateShowYear, ranger.MaskTypeCustom,
}

// Row is one value of a column and, for CUSTOM, the text its value
// expression yields (nil: CUSTOM is not compared on the row).
type Row struct {
	Value  *string
	Custom *string
}

// Mismatch is one masked value on which PostgreSQL and Hive disagree.
type Mismatch struct {
	Column Column
	Mask   string
	// Value is the input in PostgreSQL's text: the column's value, or for
	// CUSTOM the expression's result.
	Value *string
	// PG and Hive are the results, in PostgreSQL's text (floating values
	// in their shortest text).
	PG, Hive *string
	// Named is the difference of docs/masks.md that explains it, or "".
	Named string
}

func (m Mismatch) String() string {
	return fmt.Sprintf("%s on %s %s: PostgreSQL %s, Hive %s", m.Mask, m.Column.PG, Describe(m.Value), Show(m.PG), Show(m.Hive))
}

// Show quotes a value (NULL for nil), escaping what is not printable ASCII.
func Show(p *string) string {
	if p == nil {
		return "NULL"
	}
	return strconv.QuoteToASCII(*p)
}

// Describe is Show with the code points of the non-ASCII characters.
func Describe(p *string) string {
	if p == nil {
		return "NULL"
	}
	var cps []string
	for _, r := range *p {
		if r >= 0x80 || r < 0x20 {
			cps = append(cps, fmt.Sprintf("U+%04X", r))
		}
	}
	if len(cps) == 0 {
		return Show(p)
	}
	return Show(p) + " [" + strings.Join(cps, " ") + "]"
}

// Harness masks values on both sides: on PostgreSQL with the expressions
// sqlrewrite.MaskSQL builds, and through Hive's UDFs.
type Harness struct {
	conn         *pgx.Conn
	hive         *interop.Hive
	named        *Named
	transformers map[string]string
	types        map[string]sqlrewrite.ColumnType
}

// New prepares a harness over a superuser connection to an empty
// database (it creates a table per column type) and a Hive oracle. named
// may be nil: then every mismatch is unexplained.
func New(ctx context.Context, conn *pgx.Conn, hive *interop.Hive, named *Named) (*Harness, error) {
	h := &Harness{conn: conn, hive: hive, named: named, transformers: map[string]string{}, types: map[string]sqlrewrite.ColumnType{}}
	for _, mt := range policy.StockHiveServiceDef().DataMaskDef.MaskTypes {
		if mt.Transformer != "" {
			h.transformers[mt.Name] = mt.Transformer
		}
	}
	// The text forms the comparison reads: ISO dates, UTC timestamps,
	// the shortest exact floating text.
	if _, err := conn.Exec(ctx, "SET DateStyle = ISO; SET TimeZone = 'UTC'; SET extra_float_digits = 1", pgx.QueryExecModeSimpleProtocol); err != nil {
		return nil, err
	}
	return h, nil
}

// columnType creates the column's table once and reads its column type as
// pgranger's catalog does.
func (h *Harness) columnType(ctx context.Context, c Column) (sqlrewrite.ColumnType, error) {
	if ct, ok := h.types[c.PG]; ok {
		return ct, nil
	}
	t := c.table()
	if _, err := h.conn.Exec(ctx, fmt.Sprintf("DROP TABLE IF EXISTS %s; CREATE TABLE %s (i int PRIMARY KEY, c %s, s text)", t, t, c.PG),
		pgx.QueryExecModeSimpleProtocol); err != nil {
		return sqlrewrite.ColumnType{}, err
	}
	var ct sqlrewrite.ColumnType
	err := h.conn.QueryRow(ctx, `
		SELECT a.atttypid, CASE WHEN ty.typtype = 'd' THEN ty.typbasetype ELSE a.atttypid END,
		       a.atttypmod, pg_catalog.format_type(a.atttypid, a.atttypmod)
		  FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_type ty ON ty.oid = a.atttypid
		 WHERE a.attrelid = $1::pg_catalog.regclass AND a.attname = 'c'`, t).
		Scan(&ct.OID, &ct.BaseOID, &ct.TypMod, &ct.SQLName)
	if err != nil {
		return ct, fmt.Errorf("column type of %s: %w", t, err)
	}
	h.types[c.PG] = ct
	return ct, nil
}

// Expressions are the SQL of every mask of Masks over column "c" of the
// column's table, as pgranger builds it: MaskSQL for the built masks (the
// text `pgranger masks --stored-ddl` prints), the column itself for
// MASK_NONE, and for CUSTOM the value expression (here the text column
// "s") cast to the column's type, as sqlrewrite's customMask casts it;
// then each of them as the rewriter sends it, spliced into a statement
// and deparsed by pg_query.
func (h *Harness) Expressions(ctx context.Context, c Column) ([]string, error) {
	built, err := h.built(ctx, c)
	if err != nil {
		return nil, err
	}
	out := append([]string(nil), built...)
	for _, e := range built {
		tree, err := sqlrewrite.Parse("SELECT "+e, 1<<20, 200)
		if err != nil {
			return nil, fmt.Errorf("pg_query cannot parse a mask of %s: %w", c.PG, err)
		}
		d, err := sqlrewrite.Deparse(tree)
		if err != nil {
			return nil, fmt.Errorf("pg_query cannot deparse a mask of %s: %w", c.PG, err)
		}
		out = append(out, strings.TrimPrefix(d, "SELECT "))
	}
	return out, nil
}

func (h *Harness) built(ctx context.Context, c Column) ([]string, error) {
	ct, err := h.columnType(ctx, c)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(Masks))
	for i, m := range Masks {
		switch m {
		case ranger.MaskTypeNone:
			out[i] = `"c"`
		case ranger.MaskTypeCustom:
			out[i] = `CAST(("s") AS ` + ct.SQLName + `)`
		default:
			if out[i], err = sqlrewrite.MaskSQL(m, ct, `"c"`, sqlrewrite.MaskOptions{}); err != nil {
				return nil, fmt.Errorf("MaskSQL(%s, %s): %w", m, c.PG, err)
			}
		}
	}
	return out, nil
}

// Batch is how many rows go into one statement and one oracle line.
const Batch = 2000

// Check masks the rows with every mask of Masks on both sides, in batches
// of Batch, and returns the mismatches (named ones included, marked) and
// the number of results compared.
func (h *Harness) Check(ctx context.Context, c Column, rows []Row) ([]Mismatch, int, error) {
	var out []Mismatch
	compared := 0
	for lo := 0; lo < len(rows); lo += Batch {
		ms, n, err := h.check(ctx, c, rows[lo:min(lo+Batch, len(rows))])
		if err != nil {
			return nil, 0, err
		}
		out = append(out, ms...)
		compared += n
	}
	return out, compared, nil
}

func (h *Harness) check(ctx context.Context, c Column, rows []Row) ([]Mismatch, int, error) {
	exprs, err := h.Expressions(ctx, c)
	if err != nil {
		return nil, 0, err
	}
	res, err := h.postgres(ctx, c, rows, exprs)
	if err != nil {
		return nil, 0, err
	}
	// The deparsed expressions, what the rewriter sends, must give what
	// the built ones give: a difference is the builder's bug, whatever
	// Hive says.
	for i := range rows {
		for j, m := range Masks {
			if a, b := res[i][j], res[i][len(Masks)+j]; Show(a) != Show(b) {
				return nil, 0, fmt.Errorf("%s on %s %s: pg_query's round trip of the mask changes %s into %s", m, c.PG, Describe(rows[i].Value), Show(a), Show(b))
			}
		}
	}
	hive, err := h.Hive(ctx, c, rows)
	if err != nil {
		return nil, 0, err
	}
	var out []Mismatch
	compared := 0
	for j, m := range Masks {
		for i, r := range rows {
			in := r.Value
			if m == ranger.MaskTypeCustom {
				if r.Custom == nil {
					continue
				}
				in = r.Custom
			}
			compared++
			p, q := c.comparable(res[i][j], hive[j][i])
			if Show(p) == Show(q) {
				continue
			}
			mm := Mismatch{Column: c, Mask: m, Value: in, PG: p, Hive: q}
			mm.Named = h.named.Classify(mm)
			out = append(out, mm)
		}
	}
	return out, compared, nil
}

// postgres stores the rows in the column's table and selects every
// expression of them: result[row][mask], nil for NULL.
func (h *Harness) postgres(ctx context.Context, c Column, rows []Row, exprs []string) ([][]*string, error) {
	t := c.table()
	ids := make([]int32, len(rows))
	vals := make([]*string, len(rows))
	customs := make([]*string, len(rows))
	for i, r := range rows {
		ids[i], vals[i], customs[i] = int32(i), r.Value, r.Custom
	}
	if _, err := h.conn.Exec(ctx, "TRUNCATE "+t, pgx.QueryExecModeSimpleProtocol); err != nil {
		return nil, err
	}
	if _, err := h.conn.Exec(ctx, fmt.Sprintf("INSERT INTO %s SELECT i, %s, s FROM unnest($1::int[], $2::text[], $3::text[]) AS u(i, c, s)",
		t, c.insertExpr("c")), ids, vals, customs); err != nil {
		return nil, fmt.Errorf("storing %d values of %s: %w", len(rows), c.PG, err)
	}
	res, err := h.conn.PgConn().Exec(ctx, "SELECT "+strings.Join(exprs, ", ")+" FROM "+t+" ORDER BY i").ReadAll()
	if err != nil {
		return nil, err
	}
	if len(res) != 1 || res[0].Err != nil {
		if len(res) == 1 {
			err = res[0].Err
		}
		return nil, fmt.Errorf("masking %s: %v", c.PG, err)
	}
	if len(res[0].Rows) != len(rows) {
		return nil, fmt.Errorf("masking %s: %d rows for %d values", c.PG, len(res[0].Rows), len(rows))
	}
	out := make([][]*string, len(rows))
	for i, row := range res[0].Rows {
		out[i] = make([]*string, len(row))
		for j, v := range row {
			if v != nil {
				out[i][j] = ptr(string(v))
			}
		}
	}
	return out, nil
}

// Hive masks the rows with every mask of Masks through the oracle, one
// line per mask: result[mask][row] in PostgreSQL's text, nil for NULL
// (also for a row CUSTOM is not compared on). Each UDF's result is cast
// back to the column's Hive type, as Ranger's Hive plugin casts it.
func (h *Harness) Hive(ctx context.Context, c Column, rows []Row) ([][]*string, error) {
	vals := make([]*string, len(rows))
	var customs []*string
	var customAt []int
	for i, r := range rows {
		vals[i] = r.Value
		if r.Custom != nil {
			customs = append(customs, r.Custom)
			customAt = append(customAt, i)
		}
	}
	out := make([][]*string, len(Masks))
	for j, m := range Masks {
		var err error
		switch m {
		case ranger.MaskTypeCustom:
			out[j] = make([]*string, len(rows))
			var res []*string
			if res, err = h.hive.CastPG(ctx, c.PG, customs); err == nil {
				for k, i := range customAt {
					out[j][i] = res[k]
				}
			}
		case ranger.MaskTypeNull, ranger.MaskTypeNone:
			out[j], err = h.hive.MaskPG(ctx, interop.PGMaskRequest{MaskType: m, PGType: c.PG, Values: vals})
		default:
			out[j], err = h.hive.MaskPG(ctx, interop.PGMaskRequest{Transformer: h.transformers[m], PGType: c.PG, Values: vals})
		}
		if err != nil {
			return nil, fmt.Errorf("Hive %s on the twin of %s: %w", m, c.PG, err)
		}
	}
	return out, nil
}
