package ranger

import (
	"bytes"
	"encoding/json"
)

// MarshalDocument writes a Ranger document the way Ranger Admin serves it:
// Jackson's NON_EMPTY inclusion (null, "", empty lists and empty maps are
// left out; false and 0 stay), keys in sorted order, two-space indentation
// and a final newline. A file written by pgranger (the policy and tag files
// of policy.source = "file", `pgranger policy export`) therefore reads like
// a download, and two writes of equal documents are equal bytes.
func MarshalDocument(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // ids and millisecond times stay exact
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	generic, _ = dropEmpty(generic)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // filter expressions keep their < and >
	enc.SetIndent("", "  ")
	if err := enc.Encode(generic); err != nil { // encoding/json writes map keys sorted
		return nil, err
	}
	return buf.Bytes(), nil
}

// dropEmpty removes what NON_EMPTY leaves out; keep is false for a value
// that is itself empty.
func dropEmpty(v any) (any, bool) {
	switch t := v.(type) {
	case nil:
		return nil, false
	case string:
		return t, t != ""
	case []any:
		out := make([]any, 0, len(t))
		for _, e := range t {
			// An element of a list is kept even when empty: a list's
			// positions mean something (policy items in order).
			e, _ = dropEmpty(e)
			if e == nil {
				e = map[string]any{}
			}
			out = append(out, e)
		}
		return out, len(out) > 0
	case map[string]any:
		for k, e := range t {
			e, keep := dropEmpty(e)
			if !keep {
				delete(t, k)
				continue
			}
			t[k] = e
		}
		return t, len(t) > 0
	}
	return v, true
}
