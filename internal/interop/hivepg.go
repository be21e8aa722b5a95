package interop

import (
	"context"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// PostgreSQL's side of the Hive oracle: the Hive type that stands for a
// PostgreSQL column type, and values in PostgreSQL's text both ways, so a
// test can ask Hive what a masked PostgreSQL column must hold.

var (
	pgLenType = regexp.MustCompile(`^(varchar|character varying|char|character|bpchar)\s*\(\s*(\d+)\s*\)$`)
	pgNumeric = regexp.MustCompile(`^(numeric|decimal)\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)$`)
)

// HiveTypeOf is the Hive type that stands for a PostgreSQL column type
// (short or format_type() spelling): text, varchar and bpchar without a
// length are string; varchar(n) and char(n) keep their length; smallint,
// integer, bigint, date, numeric(p,s), real, double precision, boolean,
// bytea and both timestamps have their twin (timestamptz is timestamp,
// read in UTC). Other types have none.
func HiveTypeOf(pgType string) (string, bool) {
	t := strings.ToLower(strings.TrimSpace(pgType))
	if m := pgLenType.FindStringSubmatch(t); m != nil {
		if strings.HasPrefix(m[1], "var") || m[1] == "character varying" {
			return "varchar(" + m[2] + ")", true
		}
		return "char(" + m[2] + ")", true
	}
	if m := pgNumeric.FindStringSubmatch(t); m != nil {
		scale := m[3]
		if scale == "" {
			scale = "0"
		}
		return "decimal(" + m[2] + "," + scale + ")", true
	}
	switch t {
	case "text", "varchar", "character varying", "bpchar":
		return "string", true
	case "smallint", "int2":
		return "smallint", true
	case "integer", "int", "int4":
		return "int", true
	case "bigint", "int8":
		return "bigint", true
	case "date":
		return "date", true
	case "real", "float4":
		return "float", true
	case "double precision", "float8":
		return "double", true
	case "boolean", "bool":
		return "boolean", true
	case "bytea":
		return "binary", true
	case "timestamp", "timestamp without time zone", "timestamptz", "timestamp with time zone":
		return "timestamp", true
	}
	return "", false
}

func isPGDate(pgType string) bool { return strings.EqualFold(strings.TrimSpace(pgType), "date") }

func isPGBool(pgType string) bool {
	t := strings.ToLower(strings.TrimSpace(pgType))
	return t == "boolean" || t == "bool"
}

func isPGTimestamptz(pgType string) bool {
	t := strings.ToLower(strings.TrimSpace(pgType))
	return t == "timestamptz" || t == "timestamp with time zone"
}

// HiveText is a value in PostgreSQL's text (DateStyle ISO, TimeZone UTC)
// as the Hive oracle reads it: dates in ISO numbering (44 BC is -0043,
// years after 9999 signed), booleans spelled out, timestamptz without its
// offset; the rest is written the same. ±infinity has no Hive twin.
func HiveText(pgType string, v *string) (*string, error) {
	if v == nil {
		return nil, nil
	}
	switch {
	case isPGDate(pgType):
		iso, err := PGDateToISO(*v)
		return &iso, err
	case isPGBool(pgType):
		b := map[string]string{"t": "true", "f": "false", "true": "true", "false": "false"}[*v]
		if b == "" {
			return nil, fmt.Errorf("interop: %q is not a PostgreSQL boolean", *v)
		}
		return &b, nil
	case isPGTimestamptz(pgType):
		s := strings.TrimSuffix(*v, "+00")
		return &s, nil
	}
	return v, nil
}

// PGText is a value the Hive oracle printed as PostgreSQL prints the same
// value of the column type: dates as PostgreSQL's (year 0 is 0001 BC),
// booleans t and f, binary as bytea's hex, timestamptz with the UTC
// offset. Floating values keep Java's text (compare them by value).
func PGText(pgType string, v *string) (*string, error) {
	if v == nil {
		return nil, nil
	}
	var s string
	switch hiveType, _ := HiveTypeOf(pgType); {
	case isPGDate(pgType):
		var err error
		if s, err = ISODateToPG(*v); err != nil {
			return nil, err
		}
	case isPGBool(pgType):
		s = map[string]string{"true": "t", "false": "f"}[*v]
	case hiveType == "binary":
		s = `\x` + hex.EncodeToString([]byte(*v))
	case isPGTimestamptz(pgType):
		s = *v + "+00"
	default:
		return v, nil
	}
	return &s, nil
}

// PGDateToISO turns a date as PostgreSQL prints it with DateStyle ISO
// ("2024-07-15", "0044-03-15 BC", "10000-01-01") into ISO numbering as
// java.time prints it ("2024-07-15", "-0043-03-15", "+10000-01-01").
func PGDateToISO(s string) (string, error) {
	y, m, d, err := splitDate(strings.TrimSuffix(s, " BC"))
	if err != nil {
		return "", fmt.Errorf("interop: %q is not a PostgreSQL date", s)
	}
	if strings.HasSuffix(s, " BC") {
		y = 1 - y
	}
	switch {
	case y < 0:
		return fmt.Sprintf("-%04d-%02d-%02d", -y, m, d), nil
	case y > 9999:
		return fmt.Sprintf("+%d-%02d-%02d", y, m, d), nil
	}
	return fmt.Sprintf("%04d-%02d-%02d", y, m, d), nil
}

// ISODateToPG is the inverse of PGDateToISO.
func ISODateToPG(s string) (string, error) {
	neg := strings.HasPrefix(s, "-")
	y, m, d, err := splitDate(strings.TrimLeft(s, "+-"))
	if err != nil {
		return "", fmt.Errorf("interop: %q is not an ISO date", s)
	}
	if neg {
		y = -y
	}
	if y <= 0 {
		return fmt.Sprintf("%04d-%02d-%02d BC", 1-y, m, d), nil
	}
	return fmt.Sprintf("%04d-%02d-%02d", y, m, d), nil
}

func splitDate(s string) (y, m, d int, err error) {
	parts := strings.Split(s, "-")
	if len(parts) != 3 {
		return 0, 0, 0, fmt.Errorf("not a date")
	}
	if y, err = strconv.Atoi(parts[0]); err == nil {
		if m, err = strconv.Atoi(parts[1]); err == nil {
			d, err = strconv.Atoi(parts[2])
		}
	}
	return y, m, d, err
}

// PGMaskRequest asks for one mask over values of a PostgreSQL column type.
type PGMaskRequest struct {
	// Transformer is the hive service-def's transformer of the mask type,
	// or MaskType is MASK_NULL or MASK_NONE (see MaskRequest).
	Transformer string
	MaskType    string
	// PGType is the column's PostgreSQL type (HiveTypeOf says which Hive
	// type stands for it).
	PGType string
	// Values in PostgreSQL's text; nil is NULL.
	Values []*string
}

// MaskPG masks values of a PostgreSQL column type through Hive's UDF on
// the Hive type that stands for it, casts each result back to that type
// as Ranger's Hive plugin does, and returns what the masked PostgreSQL
// column must hold, in PostgreSQL's text (PGText).
func (h *Hive) MaskPG(ctx context.Context, q PGMaskRequest) ([]*string, error) {
	hiveType, ok := HiveTypeOf(q.PGType)
	if !ok {
		return nil, fmt.Errorf("interop: PostgreSQL type %s has no Hive twin", q.PGType)
	}
	in := make([]*string, len(q.Values))
	for i, v := range q.Values {
		var err error
		if in[i], err = HiveText(q.PGType, v); err != nil {
			return nil, err
		}
	}
	res, err := h.Mask(ctx, MaskRequest{Transformer: q.Transformer, MaskType: q.MaskType, Type: hiveType, Values: in, Cast: q.Transformer != ""})
	if err != nil {
		return nil, err
	}
	return pgTexts(q.PGType, res)
}

// CastPG casts texts to a PostgreSQL column type's Hive twin as Hive's
// CAST does (a CUSTOM mask's result cast back), in PostgreSQL's text.
func (h *Hive) CastPG(ctx context.Context, pgType string, texts []*string) ([]*string, error) {
	hiveType, ok := HiveTypeOf(pgType)
	if !ok {
		return nil, fmt.Errorf("interop: PostgreSQL type %s has no Hive twin", pgType)
	}
	res, err := h.Cast(ctx, "string", hiveType, texts)
	if err != nil {
		return nil, err
	}
	return pgTexts(pgType, res)
}

func pgTexts(pgType string, res []*string) ([]*string, error) {
	out := make([]*string, len(res))
	for i, v := range res {
		var err error
		if out[i], err = PGText(pgType, v); err != nil {
			return nil, err
		}
	}
	return out, nil
}
