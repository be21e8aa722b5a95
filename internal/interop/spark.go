package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Spark is a running Spark oracle: a local SparkSession that evaluates the
// expressions Kyuubi's Spark AuthZ plugin puts in place of masked columns.
type Spark struct {
	p *proc
	// Version is Spark's release.
	Version string
	Java    string
	Started time.Duration
}

// StartSpark builds (when needed) and starts the Spark oracle.
func StartSpark(ctx context.Context, opts Options) (*Spark, error) {
	a, err := SparkArtifact(ctx)
	if err != nil {
		return nil, err
	}
	p, err := startProc(ctx, a, opts)
	if err != nil {
		return nil, err
	}
	var hello struct {
		SparkVersion string `json:"sparkVersion"`
		Java         string `json:"java"`
	}
	if err := json.Unmarshal(p.hello, &hello); err != nil {
		p.close()
		return nil, fmt.Errorf("interop: spark oracle's ready line: %w", err)
	}
	return &Spark{p: p, Version: hello.SparkVersion, Java: hello.Java, Started: p.started}, nil
}

// Close stops the JVM.
func (s *Spark) Close() error { return s.p.close() }

// SparkMaskRequest asks for one Ranger mask type over values of one Spark
// type, as Kyuubi's plugin masks a column.
type SparkMaskRequest struct {
	MaskType string // MASK, MASK_SHOW_LAST_4, …, MASK_NULL, MASK_NONE, CUSTOM
	// Type is a Spark SQL type: string, int, bigint, decimal(10,2), date, timestamp, …
	Type string
	// Values as text, cast to Type as CAST(v AS type) does; nil is NULL.
	Values []*string
	// CustomValue is a CUSTOM mask's valueExpr ({col} is the column).
	CustomValue string
}

// SparkMaskResult is Spark's answer: the expression it evaluated, the
// result's type (Spark's typeof) and each result as CAST(r AS STRING).
type SparkMaskResult struct {
	Expression string    `json:"expression"`
	ResultType string    `json:"resultType"`
	Results    []*string `json:"results"`
}

// Mask evaluates the request.
func (s *Spark) Mask(ctx context.Context, q SparkMaskRequest) (*SparkMaskResult, error) {
	req := map[string]any{"op": "mask", "maskType": q.MaskType, "type": q.Type, "values": q.Values}
	if q.Values == nil {
		req["values"] = []*string{}
	}
	if q.CustomValue != "" {
		req["customValue"] = q.CustomValue
	}
	var res SparkMaskResult
	if err := s.p.call(ctx, req, &res); err != nil {
		return nil, err
	}
	if len(res.Results) != len(q.Values) {
		return nil, fmt.Errorf("interop: spark oracle answered %d results for %d values", len(res.Results), len(q.Values))
	}
	return &res, nil
}

// SQL runs a query and returns its column names and rows as text.
func (s *Spark) SQL(ctx context.Context, query string) ([]string, [][]*string, error) {
	var res struct {
		Columns []string    `json:"columns"`
		Rows    [][]*string `json:"rows"`
	}
	if err := s.p.call(ctx, map[string]any{"op": "sql", "sql": query}, &res); err != nil {
		return nil, nil, err
	}
	return res.Columns, res.Rows, nil
}

// StartRanger starts Ranger's plugin in the Spark oracle as Kyuubi's
// Spark AuthZ extension runs it (service type spark, the hive service's
// documents downloaded from url by RangerAdminRESTClient) and waits until
// it holds policies. The answer says whether tag and user-store enrichers
// were set up.
func (s *Spark) StartRanger(ctx context.Context, url, service, cacheDir string) (map[string]any, error) {
	var res map[string]any
	if err := s.p.call(ctx, map[string]any{"op": "ranger", "url": url, "service": service, "cacheDir": cacheDir}, &res); err != nil {
		return nil, err
	}
	delete(res, "id")
	return res, nil
}

// Catalog points Spark's JDBC catalog "pg" at PostgreSQL (jdbcURL,
// user, password) and names the governed tables, namespace → tables.
func (s *Spark) Catalog(ctx context.Context, jdbcURL, user, password string, tables map[string][]string) error {
	var res map[string]any
	return s.p.call(ctx, map[string]any{"op": "catalog", "url": jdbcURL, "user": user, "password": password, "tables": tables}, &res)
}

// SparkResult is a governed query's outcome: Denied (Ranger refused a
// column or table the query reads, naming them), or the columns, Spark's
// types and rows as CAST(… AS STRING) prints them. Reads lists what the
// analysed plan reads, table(columns), the columns access was checked on.
type SparkResult struct {
	Denied  string      `json:"denied"`
	Reads   []string    `json:"reads"`
	Columns []string    `json:"columns"`
	Types   []string    `json:"types"`
	Rows    [][]*string `json:"rows"`
}

// Query runs sql as user in groups (inside
// UserGroupInformation.createUserForTesting(user, groups).doAs), governed
// by Ranger's plugin. A query Spark cannot analyse or run is an
// *OracleError.
func (s *Spark) Query(ctx context.Context, user string, groups []string, sql string) (*SparkResult, error) {
	if groups == nil {
		groups = []string{}
	}
	var res SparkResult
	if err := s.p.call(ctx, map[string]any{"op": "query", "user": user, "groups": groups, "sql": sql}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
