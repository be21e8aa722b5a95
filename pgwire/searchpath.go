package pgwire

import "sync"

// searchPathState is the session's search_path as pgranger resolves names
// with it. The client loop applies a SET when it sends it, so the
// statements behind it in a pipeline resolve like the backend will; the
// backend loop takes the change back when that statement fails, and
// restores the path a transaction block started with when the block rolls
// back — PostgreSQL's own rules for a SET.
type searchPathState struct {
	mu       sync.Mutex
	current  []string
	txnStart []string // path when the client opened a transaction block
	inTxn    bool
}

func (p *searchPathState) get() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.current
}

// sent records a SET sent to the backend and returns the path before it.
func (p *searchPathState) sent(path []string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	prev := p.current
	p.current = path
	return prev
}

// begin records that the client opened a transaction block.
func (p *searchPathState) begin() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.inTxn {
		p.inTxn, p.txnStart = true, p.current
	}
}

// failed takes back the SET of a statement that failed.
func (p *searchPathState) failed(prev []string) {
	p.mu.Lock()
	p.current = prev
	p.mu.Unlock()
}

// rolledBack restores the path of the transaction block's start.
func (p *searchPathState) rolledBack() {
	p.mu.Lock()
	if p.inTxn {
		p.current = p.txnStart
	}
	p.mu.Unlock()
}

// ready notes ReadyForQuery: 'I' means no transaction block is open.
func (p *searchPathState) ready(status byte) {
	if status != 'I' {
		return
	}
	p.mu.Lock()
	p.inTxn, p.txnStart = false, nil
	p.mu.Unlock()
}
