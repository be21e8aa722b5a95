package maskref

import (
	"errors"
	"fmt"
)

// Width is the width in bits of a Hive integer type; Hive's mask loops run in
// the column's own type.
type Width int

const (
	Tinyint  Width = 8  // Hive TINYINT (Java byte); PostgreSQL has none
	Smallint Width = 16 // Hive SMALLINT (Java short), PostgreSQL int2
	Int      Width = 32 // Hive INT (Java int), PostgreSQL int4
	Bigint   Width = 64 // Hive BIGINT (Java long), PostgreSQL int8
)

type javaInt interface {
	~int8 | ~int16 | ~int32 | ~int64
}

// normNumber is MaskTransformer.init's rule for numberChar: outside 0–9
// means 1.
func normNumber(number int) int64 {
	if number < 0 || number > 9 {
		return 1
	}
	return int64(number)
}

// add is Java's compound assignment "ret += x" on a value of type T: the sum
// is computed in a wider type and narrowed, wrapping like a Java cast.
func add[T javaInt](ret T, x int64) T { return T(int64(ret) + x) }

// maskInt is MaskTransformer.transform(Byte|Short|Integer|Long).
func maskInt[T javaInt](value T, number int64) T {
	// Hive 3.1.3's MaskTransformer loops over the digits of the value, so
	// 0, which has none, stays 0 (measured with hive-exec 3.1.3, the
	// oracle of internal/interop); later Hive releases give number.
	val := value
	if value < 0 {
		val *= -1 // the minimum stays negative, as in Java
	}
	var ret T
	pos := int64(1)
	for val != 0 {
		ret = add(ret, number*pos)
		val /= 10
		pos *= 10
	}
	if value < 0 {
		ret *= -1
	}
	return ret
}

// showLastN is MaskShowLastNTransformer.transform(Byte|Short|Integer|Long).
func showLastN[T javaInt](value T, n int, number int64) T {
	if value == 0 {
		if n == 0 {
			return T(number)
		}
		return 0
	}
	val := value
	if value < 0 {
		val *= -1
	}
	var ret T
	pos := int64(1)
	for i := 0; val != 0; i++ {
		if i >= n {
			ret = add(ret, number*pos)
		} else {
			ret = add(ret, int64(val%10)*pos)
		}
		val /= 10
		pos *= 10
	}
	if value < 0 {
		ret *= -1
	}
	return ret
}

// showFirstN is MaskShowFirstNTransformer.transform(Byte|Short|Integer|Long).
func showFirstN[T javaInt](value T, n int, number int64) T {
	if value == 0 {
		if n == 0 {
			return T(number)
		}
		return 0
	}
	val := value
	if value < 0 {
		val *= -1
	}
	digits := 0
	for v := val; v != 0; v /= 10 {
		digits++
	}
	maskCount := digits - n
	if maskCount <= 0 {
		return value
	}
	var ret T
	pos := int64(1)
	for i := 0; val != 0; i++ {
		if i < maskCount {
			ret = add(ret, number*pos)
		} else {
			ret = add(ret, int64(val%10)*pos)
		}
		val /= 10
		pos *= 10
	}
	if value < 0 {
		ret *= -1
	}
	return ret
}

// MaskInt is mask(value, …, numberChar) on an integer of width w: every
// decimal digit of |value| becomes number, the sign is kept, 0 stays 0
// (Hive 3.1.3). v is taken modulo the width (as a Java cast would); the result is
// in the width's range. number outside 0–9 means 1.
func MaskInt(v int64, w Width, number int) int64 {
	num := normNumber(number)
	switch w {
	case Tinyint:
		return int64(maskInt(int8(v), num))
	case Smallint:
		return int64(maskInt(int16(v), num))
	case Int:
		return int64(maskInt(int32(v), num))
	default:
		return maskInt(v, num)
	}
}

// ShowLastNInt is mask_show_last_n(value, n, …, numberChar) on an integer of
// width w: the n least significant digits are kept, the higher ones become
// number. n < 0 counts as 0.
func ShowLastNInt(v int64, w Width, n, number int) int64 {
	num := normNumber(number)
	if n < 0 {
		n = 0
	}
	switch w {
	case Tinyint:
		return int64(showLastN(int8(v), n, num))
	case Smallint:
		return int64(showLastN(int16(v), n, num))
	case Int:
		return int64(showLastN(int32(v), n, num))
	default:
		return showLastN(v, n, num)
	}
}

// ShowFirstNInt is mask_show_first_n(value, n, …, numberChar) on an integer
// of width w: the n most significant digits are kept, the lower ones become
// number. n < 0 counts as 0.
func ShowFirstNInt(v int64, w Width, n, number int) int64 {
	num := normNumber(number)
	if n < 0 {
		n = 0
	}
	switch w {
	case Tinyint:
		return int64(showFirstN(int8(v), n, num))
	case Smallint:
		return int64(showFirstN(int16(v), n, num))
	case Int:
		return int64(showFirstN(int32(v), n, num))
	default:
		return showFirstN(v, n, num)
	}
}

// MaskInt1 is Ranger's MASK (and MASK_DATE_SHOW_YEAR) on an integer column:
// mask({col}) with numberChar 1.
func MaskInt1(v int64, w Width) int64 { return MaskInt(v, w, 1) }

// ShowLast4Int is Ranger's MASK_SHOW_LAST_4 on an integer column.
func ShowLast4Int(v int64, w Width) int64 { return ShowLastNInt(v, w, 4, 1) }

// ShowFirst4Int is Ranger's MASK_SHOW_FIRST_4 on an integer column.
func ShowFirst4Int(v int64, w Width) int64 { return ShowFirstNInt(v, w, 4, 1) }

// Date is a calendar date of the proleptic Gregorian calendar with ISO year
// numbering (year 0 is 1 BC, -1 is 2 BC), as Hive's Date (java.time.LocalDate).
type Date struct {
	Year, Month, Day int
}

// String renders the date as Hive prints it: yyyy-MM-dd, with a leading '-'
// for years before 0.
func (d Date) String() string {
	if d.Year < 0 {
		return fmt.Sprintf("-%04d-%02d-%02d", -d.Year, d.Month, d.Day)
	}
	return fmt.Sprintf("%04d-%02d-%02d", d.Year, d.Month, d.Day)
}

// IsLeap reports whether y (ISO numbering) is a Gregorian leap year.
func IsLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// DaysIn is the number of days of month m (1–12) in year y.
func DaysIn(y, m int) int {
	switch m {
	case 2:
		if IsLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// Valid reports whether d is a real date (LocalDate.of would accept it).
func (d Date) Valid() bool {
	return d.Year >= -999999999 && d.Year <= 999999999 &&
		d.Month >= 1 && d.Month <= 12 && d.Day >= 1 && d.Day <= DaysIn(d.Year, d.Month)
}

// ErrInvalidDate is returned by MaskDate when Hive's Date.of would throw.
var ErrInvalidDate = errors.New("maskref: masked date does not exist")

// MaskDate is MaskTransformer.transform(Date) with the dayValue, monthValue
// (0-based: 0 = January) and yearValue arguments, each Keep to retain the
// original field. As in Hive's init, a day outside 1–31 means 1 and a month
// outside 0–11 means 0 (January). A combination that is no date (31 April)
// makes Hive's Date.of throw; MaskDate returns ErrInvalidDate.
func MaskDate(d Date, day, month, year int) (Date, error) {
	if day != Keep && (day < 1 || day > 31) {
		day = 1
	}
	if month != Keep && (month < 0 || month > 11) {
		month = 0
	}
	out := d
	if year != Keep {
		out.Year = year
	}
	if month != Keep {
		out.Month = month + 1
	}
	if day != Keep {
		out.Day = day
	}
	if !out.Valid() {
		return Date{}, ErrInvalidDate
	}
	return out, nil
}

// MaskDateDefault is mask() on a date with the default day 1, month 0,
// year 0: always 0000-01-01 (Hive ≥ 3). Ranger's MASK, MASK_SHOW_LAST_4 and
// MASK_SHOW_FIRST_4 give it for every date.
func MaskDateDefault(Date) Date { return Date{Year: 0, Month: 1, Day: 1} }

// DateShowYear is Ranger's MASK_DATE_SHOW_YEAR on a date,
// mask({col}, 'x', 'x', 'x', -1, '1', 1, 0, -1): January 1 of the same year.
func DateShowYear(d Date) Date { return Date{Year: d.Year, Month: 1, Day: 1} }
