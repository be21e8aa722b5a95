package interop

import (
	"bytes"
	"encoding/json"
)

// RangerDocument encodes one of pgranger's Ranger documents as Ranger
// itself writes it (and as tests store them): Ranger's model classes are serialised with Jackson's
// NON_EMPTY inclusion, so an empty string, a null, an empty list or an
// empty object is never on the wire. pgranger's Go types write every
// field; Ranger's reader rejects some of those empties ("" is not an
// access-type category), and treats others differently from absence. So
// object members holding them are dropped, at every depth; list elements
// are kept as they are (a resource value "" stays).
func RangerDocument(v any) (json.RawMessage, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	return json.Marshal(dropEmpty(doc))
}

func dropEmpty(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			e = dropEmpty(e)
			if isEmpty(e) {
				delete(t, k)
			} else {
				t[k] = e
			}
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = dropEmpty(e)
		}
		return t
	}
	return v
}

func isEmpty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}
