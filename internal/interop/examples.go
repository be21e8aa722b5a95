package interop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// MaskExample is one vector of shared/ranger/mask-examples.json: a Ranger
// mask type, a Hive column type, an input and the value Hive is documented
// to return, both as JSON (string, number or null).
type MaskExample struct {
	Mask     string            `json:"mask"`
	Type     string            `json:"type"`
	Input    json.RawMessage   `json:"input"`
	Expected json.RawMessage   `json:"expected"`
	Why      string            `json:"why"`
	Config   map[string]string `json:"config"`
}

// ReadMaskExamples reads a mask-examples.json file ({"vectors": [...]}).
func ReadMaskExamples(path string) ([]MaskExample, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Vectors []MaskExample `json:"vectors"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc.Vectors, nil
}

// jsonText turns a JSON scalar into its text (nil for null); numbers keep
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
		return nil, fmt.Errorf("interop: example value %s is neither string, number nor null", t)
	}
	s := n.String()
	return &s, nil
}

// InputText is the input as text (nil = NULL).
func (e MaskExample) InputText() (*string, error) { return jsonText(e.Input) }

// ExpectedText is Hive's documented result as text (nil = NULL).
func (e MaskExample) ExpectedText() (*string, error) { return jsonText(e.Expected) }

// HiveType is the example's type as a Hive type name ("text" is string,
// a bare "decimal" decimal(10,2)).
func (e MaskExample) HiveType() string {
	switch t := strings.ToLower(strings.TrimSpace(e.Type)); t {
	case "text":
		return "string"
	case "decimal":
		return "decimal(10,2)"
	default:
		return t
	}
}

// PGType is the PostgreSQL column type that stands for the example's
// type (string → text, int → integer, decimal → numeric(10,2), double →
// double precision, …; PostgreSQL has no tinyint: smallint).
func (e MaskExample) PGType() string {
	t := e.HiveType()
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
	}
	return t
}
