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
// UG_NAMES_CSV, …). ok is false for any other value.
func (v Value) List() (l ListInfo, ok bool) {
	if v.list == nil {
		return ListInfo{}, false
	}
	return ListInfo{Items: v.list.items, Sep: v.list.sep, Quoted: v.list.quoted, Open: v.list.open, Close: v.list.clos}, true
}

// ListInfo is how a list function built its text.
type ListInfo struct {
	Items  []string
	Sep    string
	Quoted bool // each item is a '…' literal
	// Open and Close are other quotes around each item ({a},{b}); ""
	// when there are none or they are '.
	Open, Close string
}

// ErrUndefined says why an undefined value has no value.
func (v Value) ErrUndefined() error { return v.errUndefined() }

// Truthy is JavaScript's ToBoolean.
func (v Value) Truthy() bool { return v.truthy() }

// FormatNum writes a number as JavaScript's ToString does.
func FormatNum(n float64) string { return formatNum(n) }
