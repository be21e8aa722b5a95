package maskref

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Example is one vector of shared/ranger/mask-examples.json: a Ranger mask
// type, a Hive column type, an input and the value Hive returns, both as JSON
// (string, number or null).
type Example struct {
	Mask     string            `json:"mask"`
	Type     string            `json:"type"`
	Input    json.RawMessage   `json:"input"`
	Expected json.RawMessage   `json:"expected"`
	Why      string            `json:"why"`
	Config   map[string]string `json:"config"`
}

// ReadExamples reads a mask-examples.json file ({"vectors": [...]}).
func ReadExamples(path string) ([]Example, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Vectors []Example `json:"vectors"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc.Vectors, nil
}

// jsonText turns a JSON scalar into its text (nil for null). Numbers keep
// their exact digits.
func jsonText(raw json.RawMessage) (*string, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	if t[0] == '"' {
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return nil, err
		}
		return &s, nil
	}
	var n json.Number
	if err := json.Unmarshal(t, &n); err != nil {
		return nil, fmt.Errorf("maskref: example value %s is neither string, number nor null", t)
	}
	s := n.String()
	return &s, nil
}

// InputText is the input as text (nil = NULL).
func (e Example) InputText() (*string, error) { return jsonText(e.Input) }

// ExpectedText is Hive's result as text (nil = NULL), as Hive prints it.
func (e Example) ExpectedText() (*string, error) { return jsonText(e.Expected) }

// Options are the settings the example's config asks for.
func (e Example) Options() Options {
	return Options{HashAlgo: e.Config["hive.masking.algo"]}
}

var lenType = regexp.MustCompile(`^(varchar|char|character varying|character)\s*\(\s*(\d+)\s*\)$`)

// ExampleColumn maps a Hive type name of the examples to a Column.
func ExampleColumn(hiveType string) Column {
	t := strings.ToLower(strings.TrimSpace(hiveType))
	if m := lenType.FindStringSubmatch(t); m != nil {
		n, _ := strconv.Atoi(m[2])
		if strings.HasPrefix(m[1], "var") || m[1] == "character varying" {
			return Column{Kind: KindVarchar, Len: n}
		}
		return Column{Kind: KindChar, Len: n}
	}
	switch t {
	case "string", "text":
		return Column{Kind: KindText}
	case "varchar", "character varying":
		return Column{Kind: KindVarchar}
	case "tinyint":
		return Column{Kind: KindTinyint}
	case "smallint", "int2":
		return Column{Kind: KindSmallint}
	case "int", "integer", "int4":
		return Column{Kind: KindInteger}
	case "bigint", "int8":
		return Column{Kind: KindBigint}
	case "date":
		return Column{Kind: KindDate}
	}
	return Column{Kind: KindOther}
}

// ExamplePGType is the PostgreSQL column type that stands for a Hive type of
// the examples (decimal → numeric, double → double precision, tinyint →
// smallint, …). Unknown names are returned unchanged.
func ExamplePGType(hiveType string) string {
	t := strings.ToLower(strings.TrimSpace(hiveType))
	if m := lenType.FindStringSubmatch(t); m != nil {
		return t
	}
	if strings.HasPrefix(t, "decimal") {
		return "numeric" + strings.TrimPrefix(t, "decimal")
	}
	switch t {
	case "string":
		return "text"
	case "tinyint":
		return "smallint"
	case "int":
		return "integer"
	case "double":
		return "double precision"
	case "float":
		return "real"
	case "binary":
		return "bytea"
	case "timestamp":
		return "timestamp without time zone"
	}
	return t
}

// HiveToPG converts a value as Hive prints it into the text PostgreSQL prints
// for the same value of the column kind: only dates differ (year 0 is
// "0001-01-01 BC").
func HiveToPG(col Column, hive *string) *string {
	if hive == nil || col.Kind != KindDate {
		return hive
	}
	d, err := ParseDate(*hive)
	if err != nil {
		return hive
	}
	s := FormatPGDate(d)
	return &s
}
