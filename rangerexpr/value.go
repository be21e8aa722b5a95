package rangerexpr

// Kind is a value's JavaScript type.
type Kind uint8

// Kinds of values.
const (
	Undefined Kind = Kind(jsUndef)
	Null      Kind = Kind(jsNull)
	Bool      Kind = Kind(jsBool)
	Number    Kind = Kind(jsNum)
	String    Kind = Kind(jsStr)
	Array     Kind = Kind(jsArr)
	Object    Kind = Kind(jsObj)
	Context   Kind = Kind(jsCtx)
)

// Kind is the value's type.
func (v Value) Kind() Kind { return Kind(v.kind) }

// Num is a Number's value.
func (v Value) Num() float64 { return v.n }

// Items is an Array's elements.
func (v Value) Items() []string { return v.arr }

// Text is JavaScript's ToString, except that an undefined value (a
// missing attribute) and objects are errors.
func (v Value) Text() (string, error) { return v.str() }

// List describes a String a list function returned (ctx.ugNamesQ(),
// UG_NAMES_CSV, …): its items, separator and whether each item is a
// quoted literal. ok is false for any other value.
func (v Value) List() (items []string, sep string, quoted, ok bool) {
	if v.list == nil {
		return nil, "", false, false
	}
	return v.list.items, v.list.sep, v.list.quoted, true
}

// ErrUndefined says why an undefined value has no value.
func (v Value) ErrUndefined() error { return v.errUndefined() }

// Truthy is JavaScript's ToBoolean.
func (v Value) Truthy() bool { return v.truthy() }

// FormatNum writes a number as JavaScript's ToString does.
func FormatNum(n float64) string { return formatNum(n) }
