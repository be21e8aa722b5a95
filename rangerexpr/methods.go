package rangerexpr

import (
	"fmt"
	"strings"
)

// String and array methods of values ("abc".indexOf, list.includes,
// the [[…]] list forms): JavaScript's, as Ranger's script engine has them.

func argStr(args []Value, i int, method string) (string, error) {
	if i >= len(args) {
		return "", fmt.Errorf("%s needs %d argument(s)", method, i+1)
	}
	return args[i].str()
}

func strMethod(s, method string, args []Value) (Value, error) {
	switch method {
	case "toUpperCase":
		return jsString(strings.ToUpper(s)), nil
	case "toLowerCase":
		return jsString(strings.ToLower(s)), nil
	case "trim":
		return jsString(strings.TrimSpace(s)), nil
	case "split":
		if len(args) == 0 || args[0].kind == jsUndef && args[0].missing == "" {
			return Value{kind: jsArr, arr: []string{s}}, nil
		}
		sep, err := args[0].str()
		if err != nil {
			return Value{}, err
		}
		if s == "" && sep != "" {
			return Value{kind: jsArr, arr: []string{""}}, nil
		}
		var parts []string
		if sep == "" {
			for _, r := range s {
				parts = append(parts, string(r))
			}
		} else {
			parts = strings.Split(s, sep)
		}
		return Value{kind: jsArr, arr: parts}, nil
	case "includes", "startsWith", "endsWith", "indexOf":
		x, err := argStr(args, 0, method)
		if err != nil {
			return Value{}, err
		}
		switch method {
		case "includes":
			return jsBoolean(strings.Contains(s, x)), nil
		case "startsWith":
			return jsBoolean(strings.HasPrefix(s, x)), nil
		case "endsWith":
			return jsBoolean(strings.HasSuffix(s, x)), nil
		}
		i := strings.Index(s, x)
		if i > 0 {
			i = len(utf16Units(s[:i]))
		}
		return jsNumber(float64(i)), nil
	case "toString":
		return jsString(s), nil
	}
	return Value{}, fmt.Errorf("string method %s is not supported", method)
}

func arrMethod(arr []string, method string, args []Value) (Value, error) {
	switch method {
	case "includes", "indexOf":
		if len(args) == 0 {
			return Value{}, fmt.Errorf("%s needs an argument", method)
		}
		x, err := args[0].str()
		if err != nil {
			return Value{}, err
		}
		for i, s := range arr {
			if s == x {
				if method == "includes" {
					return jsTrue, nil
				}
				return jsNumber(float64(i)), nil
			}
		}
		if method == "includes" {
			return jsFalse, nil
		}
		return jsNumber(-1), nil
	case "join":
		sep := ","
		if len(args) > 0 && args[0].kind != jsUndef {
			s, err := args[0].str()
			if err != nil {
				return Value{}, err
			}
			sep = s
		}
		return jsString(strings.Join(arr, sep)), nil
	case "intersects":
		// Ranger's polyfill: some element of this list is in the other.
		if len(args) == 0 || args[0].kind == jsNull || args[0].kind == jsUndef && args[0].missing == "" {
			return jsFalse, nil
		}
		other := args[0]
		if other.kind != jsArr {
			return Value{}, fmt.Errorf("intersects needs a list")
		}
		for _, a := range arr {
			for _, b := range other.arr {
				if a == b {
					return jsTrue, nil
				}
			}
		}
		return jsFalse, nil
	case "toString":
		return jsString(strings.Join(arr, ",")), nil
	}
	return Value{}, fmt.Errorf("list method %s is not supported", method)
}

// listArgs are the optional arguments of Ranger's list functions:
// (defaultValue, separator=",", openQuote="'", closeQuote=openQuote).
// A null separator or quote is the empty string.
type listArgs struct {
	def        string
	hasDef     bool
	sep        string
	open, clos string
}

func parseListArgs(args []Value, quoted bool) (listArgs, error) {
	la := listArgs{sep: ","}
	opt := func(i int) (s string, given, isNull bool, err error) {
		if i >= len(args) {
			return "", false, false, nil
		}
		v := args[i]
		if v.kind == jsNull || v.kind == jsUndef && v.missing == "" {
			return "", true, true, nil
		}
		s, err = v.str()
		return s, true, false, err
	}
	s, given, isNull, err := opt(0)
	if err != nil {
		return la, err
	}
	la.def, la.hasDef = s, given && !isNull
	if s, given, _, err = opt(1); err != nil {
		return la, err
	} else if given {
		la.sep = s
	}
	if !quoted {
		return la, nil
	}
	la.open = "'"
	if s, given, _, err = opt(2); err != nil {
		return la, err
	} else if given {
		la.open = s
	}
	la.clos = la.open
	if s, given, isNull, err = opt(3); err != nil {
		return la, err
	} else if given && !isNull {
		la.clos = s
	}
	return la, nil
}

// csv is Ranger's toCsv / toCsvQ: the values joined, the default when there
// are none. The result keeps the items so it can be rendered as literals.
func csv(values []string, args []Value, quoted bool) (Value, error) {
	la, err := parseListArgs(args, quoted)
	if err != nil {
		return Value{}, err
	}
	items := values
	if len(items) == 0 && la.hasDef {
		items = []string{la.def}
	}
	l := &listVal{items: items, sep: la.sep}
	var text strings.Builder
	if quoted {
		switch {
		case la.open == "'" && la.clos == "'":
			l.quoted = true
		case la.open == "" && la.clos == "":
		default:
			l.open, l.clos = la.open, la.clos
		}
	}
	for i, it := range items {
		if i > 0 {
			text.WriteString(la.sep)
		}
		text.WriteString(la.open + it + la.clos)
	}
	return Value{kind: jsStr, s: text.String(), list: l}, nil
}
