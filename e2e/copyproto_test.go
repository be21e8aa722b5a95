package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// copyExchange sends the message groups to dsn one after the other, each
// followed by reading up to ReadyForQuery; on CopyInResponse it answers
// with copyIn (CopyData…, then CopyDone or CopyFail, and a Sync in the
// extended protocol, as libpq does). It returns what came back, one
// message a line, CopyData with its content and errors with their
// SQLSTATE.
func copyExchange(t *testing.T, dsn string, groups [][]pgproto3.FrontendMessage, copyIn [][]pgproto3.FrontendMessage) []string {
	t.Helper()
	fe := hijacked(t, dsn, 10*time.Second).Frontend
	var got []string
	ins := 0
	for _, g := range groups {
		for _, m := range g {
			fe.Send(m)
		}
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		for {
			m, err := fe.Receive()
			if err != nil {
				t.Fatalf("after %q: %v", got, err)
			}
			line := strings.TrimPrefix(fmt.Sprintf("%T", m), "*pgproto3.")
			switch m := m.(type) {
			case *pgproto3.CopyData:
				line += " " + strings.TrimSuffix(string(m.Data), "\n")
			case *pgproto3.ErrorResponse:
				line += " " + m.Code
			case *pgproto3.CommandComplete:
				line += " " + string(m.CommandTag)
			case *pgproto3.ReadyForQuery:
				line += " " + string(m.TxStatus)
			case *pgproto3.CopyInResponse:
				for _, c := range copyIn[ins] {
					fe.Send(c)
				}
				ins++
				if err := fe.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			got = append(got, line)
			if _, ok := m.(*pgproto3.ReadyForQuery); ok {
				break
			}
		}
	}
	return got
}

// The COPY sub-protocol in both protocols, message for message as on a
// direct connection: COPY … FROM STDIN through Parse/Bind/Execute (libpq's
// PQexecParams) ended by CopyDone and by CopyFail (57014, and the backend
// skips to the next Sync), COPY … TO STDOUT through Execute, CopyFail in a
// simple Query; and a governed COPY TO through the extended protocol comes
// out masked and filtered.
func TestCopySubProtocolLikeDirect(t *testing.T) {
	p := writerProxy(t, "copyproto ")
	ext := func(sql string, extra ...pgproto3.FrontendMessage) []pgproto3.FrontendMessage {
		return append([]pgproto3.FrontendMessage{&pgproto3.Parse{Query: sql}, &pgproto3.Bind{}, &pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}}, extra...)
	}
	data := func(v string) *pgproto3.CopyData { return &pgproto3.CopyData{Data: []byte(v + "\n")} }
	groups := [][]pgproto3.FrontendMessage{
		ext("COPY mallory.loot (v) FROM STDIN", &pgproto3.Sync{}),
		ext("COPY mallory.loot (v) FROM STDIN", &pgproto3.Sync{}),
		{&pgproto3.Query{String: "COPY mallory.loot (v) FROM STDIN"}},
		ext(`COPY (SELECT v FROM mallory.loot WHERE starts_with(v, 'copyproto ') ORDER BY v COLLATE "C") TO STDOUT`, &pgproto3.Sync{}),
	}
	copyIn := func(who string) [][]pgproto3.FrontendMessage {
		return [][]pgproto3.FrontendMessage{
			{data("copyproto " + who + " a"), data("copyproto " + who + " b"), &pgproto3.CopyDone{}, &pgproto3.Sync{}},
			{data("copyproto " + who + " failed"), &pgproto3.CopyFail{Message: "client gave up"}, &pgproto3.Sync{}},
			{data("copyproto " + who + " failed"), &pgproto3.CopyFail{Message: "client gave up"}},
		}
	}
	via := copyExchange(t, p.dsn("bob", "bob"), groups, copyIn("x"))
	deleteLoot(t, "copyproto ")
	direct := copyExchange(t, cluster.DSN("pgranger_svc", "pgranger_svc", "demo"), groups, copyIn("x"))
	equalLines(t, "through pgranger (left) and directly", via, direct)
	equalLines(t, "direct exchange", direct, []string{
		"ParseComplete", "BindComplete", "NoData", "CopyInResponse", "CommandComplete COPY 2", "ReadyForQuery I",
		"ParseComplete", "BindComplete", "NoData", "CopyInResponse", "ErrorResponse 57014", "ReadyForQuery I",
		"CopyInResponse", "ErrorResponse 57014", "ReadyForQuery I",
		"ParseComplete", "BindComplete", "NoData", "CopyOutResponse", "CopyData copyproto x a", "CopyData copyproto x b", "CopyDone", "CommandComplete COPY 2", "ReadyForQuery I",
	})

	masked := copyExchange(t, p.dsn("bob", "bob"), [][]pgproto3.FrontendMessage{
		ext("COPY (SELECT id, ssn FROM sales.orders WHERE id < 4 ORDER BY id) TO STDOUT", &pgproto3.Sync{}),
	}, nil)
	equalLines(t, "governed COPY TO through the extended protocol", masked, []string{
		"ParseComplete", "BindComplete", "NoData", "CopyOutResponse", "CopyData 1\txxx-xx-1111", "CopyData 3\txxx-xx-3333", "CopyDone", "CommandComplete COPY 2", "ReadyForQuery I",
	})
}
