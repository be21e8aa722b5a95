package maskref

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Kind is the kind of a column as far as the mask UDFs are concerned.
type Kind int

const (
	KindOther    Kind = iota // any type Hive's mask UDFs do not take (numeric, float, bool, timestamp, …): NULL
	KindText                 // text (Hive STRING)
	KindVarchar              // varchar(n), Len = n (0 = no limit)
	KindChar                 // char(n), Len = n (0 = no padding)
	KindTinyint              // Hive TINYINT; PostgreSQL has no such type (only for Hive vectors)
	KindSmallint             // smallint / int2
	KindInteger              // integer / int4
	KindBigint               // bigint / int8
	KindDate                 // date
)

// Column describes the masked column.
type Column struct {
	Kind Kind
	Len  int // n of varchar(n) / char(n); 0 = none
}

// Options are the settings that change results.
type Options struct {
	HashAlgo string // "", "sha256" or "sha512" (Hive's hive.masking.algo)
}

// Errors of Apply.
var (
	ErrUnknownMaskType = errors.New("maskref: unknown mask type")
	ErrCustomMask      = errors.New("maskref: a CUSTOM mask is an SQL expression; its value cannot be predicted here")
	ErrHashAlgo        = errors.New(`maskref: hash algorithm must be "sha256" or "sha512"`)
)

// Ranger mask type names (hive service-def).
const (
	TypeMask         = "MASK"
	TypeShowLast4    = "MASK_SHOW_LAST_4"
	TypeShowFirst4   = "MASK_SHOW_FIRST_4"
	TypeHash         = "MASK_HASH"
	TypeNull         = "MASK_NULL"
	TypeNone         = "MASK_NONE"
	TypeDateShowYear = "MASK_DATE_SHOW_YEAR"
	TypeCustom       = "CUSTOM"
)

// HashAlgo validates and normalises a hash-algorithm option: "" and "sha256"
// give "sha256", "sha512" gives "sha512" (case and surrounding spaces are
// ignored, as in Hive); anything else is ErrHashAlgo. (Hive itself treats any
// value other than sha512 as sha256; pgranger rejects a typo instead.)
func HashAlgo(algo string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(algo)) {
	case "", "sha256":
		return "sha256", nil
	case "sha512":
		return "sha512", nil
	}
	return "", fmt.Errorf("%w, not %q", ErrHashAlgo, algo)
}

// Apply predicts the value pgranger returns for a column of kind col masked
// with the Ranger mask type maskType, in the text form PostgreSQL prints
// (DateStyle ISO). in and the result are nil for SQL NULL. It is Hive's UDF
// result (see the package doc) followed by Hive's cast back to the column
// type (TableMask wraps every mask in CAST(expr AS coltype), which cuts a
// hash to varchar(n)/char(n) and pads char(n)), plus pgranger's choices
// where PostgreSQL has values Hive has not:
//
//   - Hive's year 0 (1 BC) prints as "0001-01-01 BC"; any year y ≤ 0 as
//     (1-y) BC.
//   - MASK, MASK_SHOW_LAST_4 and MASK_SHOW_FIRST_4 turn every non-NULL date,
//     ±infinity included, into 0001-01-01 BC.
//   - MASK_DATE_SHOW_YEAR keeps ±infinity, and gives NULL for the dates of
//     4714 BC, whose January 1 precedes PostgreSQL's first date.
func Apply(maskType string, col Column, in *string, opts Options) (*string, error) {
	algo, err := HashAlgo(opts.HashAlgo)
	if err != nil {
		return nil, err
	}
	switch maskType {
	case TypeMask, TypeShowLast4, TypeShowFirst4, TypeHash, TypeNull, TypeNone, TypeDateShowYear:
	case TypeCustom:
		return nil, ErrCustomMask
	default:
		return nil, fmt.Errorf("%w %q", ErrUnknownMaskType, maskType)
	}
	if in == nil || maskType == TypeNull {
		return nil, nil
	}
	v := *in
	switch col.Kind {
	case KindText, KindVarchar, KindChar:
		if col.Kind == KindChar && col.Len > 0 {
			v = PadChar(v, col.Len)
		}
		var out string
		switch maskType {
		case TypeNone:
			return &v, nil
		case TypeMask:
			out = Mask(v)
		case TypeShowLast4:
			out = ShowLast4(v)
		case TypeShowFirst4:
			out = ShowFirst4(v)
		case TypeDateShowYear:
			out = DateShowYearString(v)
		case TypeHash:
			out = Hash(v, algo)
		}
		switch col.Kind {
		case KindVarchar:
			out = TruncateChars(out, col.Len)
		case KindChar:
			if col.Len > 0 {
				out = PadChar(out, col.Len)
			}
		}
		return &out, nil

	case KindTinyint, KindSmallint, KindInteger, KindBigint:
		w := map[Kind]Width{KindTinyint: Tinyint, KindSmallint: Smallint, KindInteger: Int, KindBigint: Bigint}[col.Kind]
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, int(w))
		if err != nil {
			return nil, fmt.Errorf("maskref: %q is not a %d-bit integer: %w", v, w, err)
		}
		var r int64
		switch maskType {
		case TypeNone:
			r = n
		case TypeMask, TypeDateShowYear:
			r = MaskInt1(n, w)
		case TypeShowLast4:
			r = ShowLast4Int(n, w)
		case TypeShowFirst4:
			r = ShowFirst4Int(n, w)
		case TypeHash:
			return nil, nil
		}
		out := strconv.FormatInt(r, 10)
		return &out, nil

	case KindDate:
		if maskType == TypeHash {
			return nil, nil
		}
		if maskType == TypeNone {
			return &v, nil
		}
		inf := v == "infinity" || v == "-infinity"
		var d Date
		if !inf {
			d, err = ParseDate(v)
			if err != nil {
				return nil, err
			}
		}
		var out string
		switch maskType {
		case TypeMask, TypeShowLast4, TypeShowFirst4:
			out = FormatPGDate(MaskDateDefault(d))
		case TypeDateShowYear:
			if inf {
				out = v
			} else if d.Year < PGMinYear+1 {
				return nil, nil
			} else {
				out = FormatPGDate(DateShowYear(d))
			}
		}
		return &out, nil
	}
	return nil, nil // KindOther: Hive's UnsupportedDatatypeTransformAdapter
}

// PGMinYear is the ISO year of PostgreSQL's first date, 4714-11-24 BC.
const PGMinYear = -4713

// FormatPGDate prints d as PostgreSQL does with DateStyle ISO: years ≤ 0
// become (1-year) BC, so Hive's 0000-01-01 is "0001-01-01 BC".
func FormatPGDate(d Date) string {
	if d.Year <= 0 {
		return fmt.Sprintf("%04d-%02d-%02d BC", 1-d.Year, d.Month, d.Day)
	}
	return fmt.Sprintf("%04d-%02d-%02d", d.Year, d.Month, d.Day)
}

// ParseDate reads a date printed by PostgreSQL ("2024-07-15",
// "0044-03-15 BC") or by Hive ("0000-01-01", "-0043-03-15") into ISO
// numbering.
func ParseDate(s string) (Date, error) {
	t := strings.TrimSpace(s)
	bc := false
	if strings.HasSuffix(t, " BC") {
		bc, t = true, strings.TrimSuffix(t, " BC")
	}
	neg := false
	if strings.HasPrefix(t, "-") {
		neg, t = true, t[1:]
	}
	parts := strings.Split(t, "-")
	if len(parts) != 3 {
		return Date{}, fmt.Errorf("maskref: %q is not a date", s)
	}
	var f [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return Date{}, fmt.Errorf("maskref: %q is not a date", s)
		}
		f[i] = n
	}
	d := Date{Year: f[0], Month: f[1], Day: f[2]}
	switch {
	case bc && neg, bc && d.Year == 0:
		return Date{}, fmt.Errorf("maskref: %q is not a date", s)
	case bc:
		d.Year = 1 - d.Year
	case neg:
		d.Year = -d.Year
	}
	if !d.Valid() {
		return Date{}, fmt.Errorf("maskref: %q is not a date", s)
	}
	return d, nil
}
