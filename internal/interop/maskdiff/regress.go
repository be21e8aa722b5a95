package maskdiff

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/pgranger/pgranger/ranger"
)

// Regression is a shrunk mismatch, stored as JSON under
// testdata/regressions: a column type, a mask type, one value and what
// Hive returns for it, in PostgreSQL's text: what pgranger's mask must
// return on PostgreSQL. For CUSTOM the value
// is the text the value expression yields.
type Regression struct {
	Name   string  `json:"name"`
	Why    string  `json:"why"`
	Column string  `json:"column"`
	Mask   string  `json:"mask"`
	Value  *string `json:"value"`
	Hive   *string `json:"hive"`
}

// RegressionOf is a mismatch as a regression case to fill in and store.
func RegressionOf(m Mismatch, name, why string) Regression {
	return Regression{Name: name, Why: why, Column: m.Column.PG, Mask: m.Mask, Value: m.Value, Hive: m.Hive}
}

// JSON is the case as a file's content.
func (r Regression) JSON() string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(r); err != nil {
		panic(err)
	}
	return buf.String()
}

// ReadRegressions reads every *.json of dir, sorted by file name.
func ReadRegressions(dir string) ([]Regression, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []Regression
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var r Regression
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if _, ok := ColumnOf(r.Column); !ok {
			return nil, fmt.Errorf("%s: column type %q is not one of the differential's", p, r.Column)
		}
		out = append(out, r)
	}
	return out, nil
}

// row is the case as a row of its column's table.
func (r Regression) row() Row {
	if r.Mask == ranger.MaskTypeCustom {
		return Row{Custom: r.Value}
	}
	return Row{Value: r.Value}
}

func (r Regression) maskIndex() (int, error) {
	for j, m := range Masks {
		if m == r.Mask {
			return j, nil
		}
	}
	return 0, fmt.Errorf("%s: mask type %q is not one of the differential's", r.Name, r.Mask)
}

// OnPostgres masks the case's value on PostgreSQL alone (the Hive oracle
// is not asked) and returns the result in the comparable text.
func (h *Harness) OnPostgres(ctx context.Context, r Regression) (*string, error) {
	c, _ := ColumnOf(r.Column)
	j, err := r.maskIndex()
	if err != nil {
		return nil, err
	}
	exprs, err := h.Expressions(ctx, c)
	if err != nil {
		return nil, err
	}
	res, err := h.postgres(ctx, c, []Row{r.row()}, exprs)
	if err != nil {
		return nil, err
	}
	if a, b := res[0][j], res[0][len(Masks)+j]; Show(a) != Show(b) {
		return nil, fmt.Errorf("pg_query's round trip of the mask changes %s into %s", Show(a), Show(b))
	}
	pg, _ := c.comparable(res[0][j], nil)
	return pg, nil
}

// OnHive masks the case's value through Hive's UDF and returns the
// result in the comparable text.
func (h *Harness) OnHive(ctx context.Context, r Regression) (*string, error) {
	c, _ := ColumnOf(r.Column)
	j, err := r.maskIndex()
	if err != nil {
		return nil, err
	}
	res, err := h.Hive(ctx, c, []Row{r.row()})
	if err != nil {
		return nil, err
	}
	_, hive := c.comparable(nil, res[j][0])
	return hive, nil
}
