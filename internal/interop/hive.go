package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Hive is a running Hive mask-UDF oracle.
type Hive struct {
	p *proc
	// Version is the hive-exec release; Functions the mask UDFs it serves.
	Version   string
	Functions []string
	Java      string
	Started   time.Duration
}

// StartHive builds (when needed) and starts the Hive mask oracle.
func StartHive(ctx context.Context, opts Options) (*Hive, error) {
	a, err := HiveArtifact(ctx)
	if err != nil {
		return nil, err
	}
	p, err := startProc(ctx, a, opts)
	if err != nil {
		return nil, err
	}
	var hello struct {
		HiveVersion string   `json:"hiveVersion"`
		Functions   []string `json:"functions"`
		Java        string   `json:"java"`
	}
	if err := json.Unmarshal(p.hello, &hello); err != nil {
		p.close()
		return nil, fmt.Errorf("interop: hive oracle's ready line: %w", err)
	}
	return &Hive{p: p, Version: hello.HiveVersion, Functions: hello.Functions, Java: hello.Java, Started: p.started}, nil
}

// Close stops the JVM.
func (h *Hive) Close() error { return h.p.close() }

// MaskRequest asks for one mask over a batch of values of one Hive type.
type MaskRequest struct {
	// Transformer is a Ranger transformer as the hive service-def writes
	// it, "mask_show_last_n({col}, 4, 'x', 'x', 'x', -1, '1')": the UDF is
	// called with exactly these constant arguments. Or MaskType is
	// MASK_NULL or MASK_NONE, which call no UDF.
	Transformer string
	MaskType    string
	// Type is the Hive column type: string, varchar(n), char(n), tinyint,
	// smallint, int, bigint, date, timestamp, decimal(p,s), double,
	// boolean, ….
	Type string
	// Values in text (dates ISO, "-0043-03-15" for 44 BC); nil is NULL.
	Values []*string
	// Cast: cast the UDF's result back to Type, as Ranger's Hive plugin
	// wraps every mask (cuts a hash to varchar(n), pads char(n)).
	Cast bool
}

// Mask evaluates the request: one result per value, nil for NULL, in the
// text form of the UDF's result type (char padded, dates ISO).
func (h *Hive) Mask(ctx context.Context, q MaskRequest) ([]*string, error) {
	req := map[string]any{"op": "mask", "type": q.Type, "values": q.Values}
	if q.Transformer != "" {
		req["transformer"] = q.Transformer
	}
	if q.MaskType != "" {
		req["maskType"] = q.MaskType
	}
	if q.Cast {
		req["cast"] = true
	}
	if q.Values == nil {
		req["values"] = []*string{}
	}
	var res struct {
		Results []*string `json:"results"`
	}
	if err := h.p.call(ctx, req, &res); err != nil {
		return nil, err
	}
	if len(res.Results) != len(q.Values) {
		return nil, fmt.Errorf("interop: hive oracle answered %d results for %d values", len(res.Results), len(q.Values))
	}
	return res.Results, nil
}

// Cast casts values of Hive type from to Hive type to as Hive's CAST does
// (what Ranger's Hive plugin does with a CUSTOM mask's result): one result
// per value, nil for NULL, in the text form of type to.
func (h *Hive) Cast(ctx context.Context, from, to string, values []*string) ([]*string, error) {
	if values == nil {
		values = []*string{}
	}
	var res struct {
		Results []*string `json:"results"`
	}
	if err := h.p.call(ctx, map[string]any{"op": "cast", "from": from, "type": to, "values": values}, &res); err != nil {
		return nil, err
	}
	if len(res.Results) != len(values) {
		return nil, fmt.Errorf("interop: hive oracle answered %d results for %d values", len(res.Results), len(values))
	}
	return res.Results, nil
}
