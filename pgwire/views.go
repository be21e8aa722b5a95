package pgwire

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgranger/pgranger/sqlrewrite"
)

// Row-filtered relations are read through temporary security_barrier
// views (sqlrewrite.View). A view must exist on the backend session before
// a statement naming it is parsed there, so the client loop creates the
// missing ones just before it forwards the statement, with messages of its
// own whose answers the backend loop swallows.
//
// A temporary view lives as long as the backend session unless the
// transaction that created it rolls back. viewSet therefore tracks each
// view as committed or as created in the transaction still open; the
// backend loop drops the open ones when that transaction fails or rolls
// back, and they are created again on next use. CREATE OR REPLACE is
// idempotent, so a view believed missing costs one redundant creation and
// never a wrong result.
type viewSet struct {
	mu        sync.Mutex
	state     map[string]viewState
	txnFailed bool // an error was seen in the open transaction
	// oids maps the backend OID of each view known on the connection to
	// the columns it stands for (see mapOrigins); names finds a view's OID.
	oids  map[uint32]*viewOrigin
	names map[string]uint32
}

// viewOrigin is what a security-barrier view's result columns report as
// their origin instead of the view (RowDescription's table OID and column
// number): the governed table's column for an unmasked column, nothing
// (0, 0) for a masked one, which is computed as it is in a wrapper
// subquery. Clients show these (JDBC's ResultSetMetaData.getTableName,
// isNullable; psycopg2's Column.table_oid; node-postgres' tableID), and
// a direct connection reports the table, never pgranger's view.
type viewOrigin struct {
	table   uint32  // 0 when the view reads no single catalog relation
	attnums []int16 // per view column (1-based position - 1); 0 = computed
}

type viewState int

const (
	viewRequested viewState = iota + 1 // creation sent, not confirmed
	viewInTxn                          // created in the open transaction
	viewCommitted
)

// missing returns the views of res not known on the connection and marks
// them requested.
func (vs *viewSet) missing(views []sqlrewrite.View) []sqlrewrite.View {
	if len(views) == 0 {
		return nil
	}
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if vs.state == nil {
		vs.state = map[string]viewState{}
	}
	var out []sqlrewrite.View
	for _, v := range views {
		if vs.state[v.Name] == 0 {
			vs.state[v.Name] = viewRequested
			out = append(out, v)
		}
	}
	return out
}

func (vs *viewSet) created(name string) {
	vs.mu.Lock()
	if vs.state[name] == viewRequested {
		vs.state[name] = viewInTxn
	}
	vs.mu.Unlock()
}

func (vs *viewSet) forget(name string) {
	vs.mu.Lock()
	delete(vs.state, name)
	vs.dropOID(name)
	vs.mu.Unlock()
}

// reset forgets every view: the backend dropped them (DISCARD ALL/TEMP).
func (vs *viewSet) reset() {
	vs.mu.Lock()
	vs.state = nil
	vs.oids, vs.names = nil, nil
	vs.txnFailed = false
	vs.mu.Unlock()
}

// located records the backend OID of a view (the answer to
// View.LocateSQL) and the origins its columns stand for.
func (vs *viewSet) located(name string, oid uint32, o *viewOrigin) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if vs.state[name] == 0 || oid == 0 {
		return // forgotten meanwhile
	}
	vs.dropOID(name)
	if vs.oids == nil {
		vs.oids, vs.names = map[uint32]*viewOrigin{}, map[string]uint32{}
	}
	vs.oids[oid], vs.names[name] = o, oid
}

func (vs *viewSet) dropOID(name string) {
	if oid, ok := vs.names[name]; ok {
		delete(vs.oids, oid)
		delete(vs.names, name)
	}
}

// mapOrigins rewrites, in place, the column origins of a RowDescription
// body that name one of the connection's views (see viewOrigin).
func (vs *viewSet) mapOrigins(body []byte) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if len(vs.oids) == 0 || len(body) < 2 {
		return
	}
	n := int(binary.BigEndian.Uint16(body))
	p := 2
	for i := 0; i < n; i++ {
		end := p
		for end < len(body) && body[end] != 0 {
			end++
		}
		p = end + 1
		if p+18 > len(body) {
			return // malformed: relayed as it came
		}
		if o, ok := vs.oids[binary.BigEndian.Uint32(body[p:])]; ok {
			table, col := uint32(0), uint16(0)
			if k := int(binary.BigEndian.Uint16(body[p+4:])); o.table != 0 && k >= 1 && k <= len(o.attnums) && o.attnums[k-1] > 0 {
				table, col = o.table, uint16(o.attnums[k-1])
			}
			binary.BigEndian.PutUint32(body[p:], table)
			binary.BigEndian.PutUint16(body[p+4:], col)
		}
		p += 18
	}
}

// parseOIDRow reads the one-column text DataRow answering View.LocateSQL.
func parseOIDRow(body []byte) uint32 {
	var dr pgproto3.DataRow
	if dr.Decode(body) != nil || len(dr.Values) != 1 {
		return 0
	}
	v, err := strconv.ParseUint(string(dr.Values[0]), 10, 32)
	if err != nil {
		return 0
	}
	return uint32(v)
}

// errorSeen notes an error in the open transaction.
func (vs *viewSet) errorSeen() {
	vs.mu.Lock()
	vs.txnFailed = true
	vs.mu.Unlock()
}

// commandTag handles a CommandComplete: a ROLLBACK (of the transaction or
// to a savepoint) may have dropped views created in the open transaction.
func (vs *viewSet) commandTag(tag []byte) {
	if !bytes.HasPrefix(tag, []byte("ROLLBACK")) {
		return
	}
	vs.mu.Lock()
	vs.dropOpen()
	vs.mu.Unlock()
}

// ready handles ReadyForQuery: when no transaction is open any more, the
// views it created are committed, unless it failed.
func (vs *viewSet) ready(status byte) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	switch status {
	case 'E':
		vs.txnFailed = true
	case 'I':
		if vs.txnFailed {
			vs.dropOpen()
		}
		for name, st := range vs.state {
			if st == viewInTxn {
				vs.state[name] = viewCommitted
			}
		}
		vs.txnFailed = false
	}
}

func (vs *viewSet) dropOpen() {
	for name, st := range vs.state {
		if st != viewCommitted {
			delete(vs.state, name)
			vs.dropOID(name)
		}
	}
}

// viewStatement and viewPortal are the names pgranger's own view-creating
// statement and portal use on the backend; they are closed right after use.
const (
	viewStatement = "pgranger_view"
	viewPortal    = "pgranger_view"
)

// createViews sends the creation of the statement's missing views. In the
// extended protocol the messages join the client's pipeline (no Sync, so
// its implicit transaction is untouched); before a simple Query they end
// with a Sync of their own.
func (s *session) createViews(views []sqlrewrite.View, simple bool) error {
	missing := s.bc.views.missing(views)
	if len(missing) == 0 {
		return nil
	}
	w := s.bc.w
	for _, v := range missing {
		origin := &viewOrigin{table: v.Table, attnums: v.Attnums}
		// Closed first as well: a creation that failed midway (the rest
		// of its pipeline skipped) may have left them behind.
		s.queue.push(pending{kind: 'C', swallow: true})
		s.queue.push(pending{kind: 'C', swallow: true})
		s.queue.push(pending{kind: 'P', swallow: true, view: v.Name, viewBeforeQuery: simple})
		s.queue.push(pending{kind: 'B', swallow: true, view: v.Name, viewBeforeQuery: simple})
		s.queue.push(pending{kind: 'E', swallow: true, view: v.Name, viewBeforeQuery: simple, createsView: true})
		s.queue.push(pending{kind: 'C', swallow: true})
		s.queue.push(pending{kind: 'C', swallow: true})
		s.queue.push(pending{kind: 'P', swallow: true, view: v.Name, viewBeforeQuery: simple})
		s.queue.push(pending{kind: 'B', swallow: true, view: v.Name, viewBeforeQuery: simple})
		s.queue.push(pending{kind: 'E', swallow: true, view: v.Name, viewBeforeQuery: simple, locates: origin})
		s.queue.push(pending{kind: 'C', swallow: true})
		s.queue.push(pending{kind: 'C', swallow: true})
		for _, m := range []encoder{
			&pgproto3.Close{ObjectType: 'P', Name: viewPortal},
			&pgproto3.Close{ObjectType: 'S', Name: viewStatement},
			&pgproto3.Parse{Name: viewStatement, Query: v.Create},
			&pgproto3.Bind{DestinationPortal: viewPortal, PreparedStatement: viewStatement},
			&pgproto3.Execute{Portal: viewPortal},
			&pgproto3.Close{ObjectType: 'P', Name: viewPortal},
			&pgproto3.Close{ObjectType: 'S', Name: viewStatement},
			&pgproto3.Parse{Name: viewStatement, Query: v.LocateSQL()},
			&pgproto3.Bind{DestinationPortal: viewPortal, PreparedStatement: viewStatement},
			&pgproto3.Execute{Portal: viewPortal},
			&pgproto3.Close{ObjectType: 'P', Name: viewPortal},
			&pgproto3.Close{ObjectType: 'S', Name: viewStatement},
		} {
			if err := writeMsg(w, m); err != nil {
				return err
			}
		}
	}
	if simple {
		s.queue.push(pending{kind: 'S', swallow: true})
		return writeMsg(w, &pgproto3.Sync{})
	}
	return nil
}

// viewErrorResponse explains a failed view creation to the client.
func viewErrorResponse(body []byte) []byte {
	var er pgproto3.ErrorResponse
	er.Decode(body)
	return encodeError(&pgproto3.ErrorResponse{
		Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: er.Code,
		Message: "pgranger: cannot create the view a write through a row filter goes through: " + er.Message,
		Hint:    "Temporary views cannot be created in a read-only transaction or on a hot standby; writes need a writable primary.",
	})
}
