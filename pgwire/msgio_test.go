package pgwire

import (
	"bufio"
	"bytes"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// writeQuery writes the bytes pgproto3's Query encodes.
func TestWriteQuery(t *testing.T) {
	for _, sql := range []string{"", "SELECT 1", "SELECT 'é' || $1"} {
		var got bytes.Buffer
		w := bufio.NewWriter(&got)
		if err := writeQuery(w, sql); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		want, _ := (&pgproto3.Query{String: sql}).Encode(nil)
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("writeQuery(%q) = %q, want %q", sql, got.Bytes(), want)
		}
	}
}
