// ClientCheck drives the PostgreSQL JDBC driver through pgranger for
// e2e/jdbc_test.go, which compiles it once per run and compares what it
// prints, line by line, with the results it expects.
//
//	java ClientCheck meta URL          DatabaseMetaData calls (compared with a direct connection)
//	java ClientCheck run URL DENY_URL  statements as bob; DENY_URL is carol's
//	java ClientCheck query URL SQL     one query's rows
//
// Every check prints "name: value" lines; a failing statement prints
// "name: ERROR <SQLSTATE>" so the test can assert SQLSTATEs. In run mode
// the program stops twice after the server-side executions, prints
// "waiting for policy change" and reads a line from standard input: the
// test edits the policy file meanwhile.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.StringReader;
import java.io.StringWriter;
import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;
import org.postgresql.core.BaseConnection;

public class ClientCheck {
    // The protocol messages the driver sent ("FE=> Parse(stmt=S_1,…"), from
    // its FINEST log: the proof of server-side preparation.
    static final List<String> sent = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        Logger pg = Logger.getLogger("org.postgresql");
        pg.setUseParentHandlers(false);
        pg.setLevel(Level.FINEST);
        SimpleFormatter fmt = new SimpleFormatter();
        pg.addHandler(new Handler() {
            @Override
            public void publish(LogRecord r) {
                String m = fmt.formatMessage(r).trim();
                if (m.startsWith("FE=> Parse(") || m.startsWith("FE=> Bind(")) {
                    synchronized (sent) {
                        sent.add(m.substring(5, m.indexOf(',')));
                    }
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        });
        switch (args[0]) {
            case "meta":
                meta(args[1]);
                break;
            case "run":
                run(args[1], args[2]);
                break;
            case "query":
                try (Connection c = DriverManager.getConnection(args[1]);
                        Statement st = c.createStatement();
                        ResultSet rs = st.executeQuery(args[2])) {
                    print("query", all(rs));
                }
                break;
            case "fetch":
                // A fetch size: the driver reads the result through a
                // portal in row-limited Executes (autocommit off).
                try (Connection c = DriverManager.getConnection(args[1])) {
                    c.setAutoCommit(false);
                    try (PreparedStatement ps = c.prepareStatement(args[2])) {
                        ps.setFetchSize(Integer.parseInt(args[3]));
                        try (ResultSet rs = ps.executeQuery()) {
                            print("fetch", all(rs));
                        }
                    }
                    c.commit();
                }
                break;
            case "readonly":
                // setReadOnly(true) with auto-commit off: the driver opens
                // each transaction with BEGIN READ ONLY.
                try (Connection c = DriverManager.getConnection(args[1])) {
                    c.setReadOnly(true);
                    c.setAutoCommit(false);
                    for (int i = 2; i < args.length; i++) {
                        try (PreparedStatement ps = c.prepareStatement(args[i]);
                                ResultSet rs = ps.executeQuery()) {
                            print("readonly " + (i - 1), all(rs));
                        } catch (SQLException e) {
                            error("readonly " + (i - 1), e);
                        }
                    }
                    c.commit();
                }
                break;
            default:
                throw new IllegalArgumentException(args[0]);
        }
    }

    static String cell(ResultSet rs, int i) throws SQLException {
        String v = rs.getString(i);
        return v == null ? "NULL" : v;
    }

    static List<String> lines(ResultSet rs, String... cols) throws SQLException {
        List<String> out = new ArrayList<>();
        while (rs.next()) {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < cols.length; i++) {
                if (i > 0) b.append('|');
                String v = rs.getString(cols[i]);
                b.append(v == null ? "NULL" : v);
            }
            out.add(b.toString());
        }
        return out;
    }

    static List<String> all(ResultSet rs) throws SQLException {
        List<String> out = new ArrayList<>();
        int n = rs.getMetaData().getColumnCount();
        while (rs.next()) {
            StringBuilder b = new StringBuilder();
            for (int i = 1; i <= n; i++) {
                if (i > 1) b.append('|');
                b.append(cell(rs, i));
            }
            out.add(b.toString());
        }
        return out;
    }

    static String counts(int[] n) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n.length; i++) {
            if (i > 0) b.append(',');
            b.append(n[i]);
        }
        return b.toString();
    }

    static void print(String name, List<String> rows) {
        if (rows.isEmpty()) System.out.println(name + ": (none)");
        for (String r : rows) System.out.println(name + ": " + r);
    }

    static void error(String name, SQLException e) {
        System.out.println(name + ": ERROR " + e.getSQLState());
        System.err.println(name + ": " + e);
    }

    interface Check {
        void run() throws Exception;
    }

    static void check(String name, Check c) {
        try {
            c.run();
        } catch (SQLException e) {
            error(name, e);
        } catch (Exception e) {
            System.out.println(name + ": EXCEPTION " + e);
        }
    }

    // What DBeaver, Metabase and Tableau ask a driver for.
    static void meta(String url) throws SQLException {
        try (Connection c = DriverManager.getConnection(url)) {
            DatabaseMetaData md = c.getMetaData();
            check("tables", () -> {
                try (ResultSet rs = md.getTables(null, "sales", "%", new String[] {"TABLE", "VIEW"})) {
                    print("tables", lines(rs, "TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE"));
                }
            });
            check("columns", () -> {
                try (ResultSet rs = md.getColumns(null, "sales", "orders", "%")) {
                    print("columns", lines(rs, "COLUMN_NAME", "TYPE_NAME", "DATA_TYPE", "COLUMN_SIZE",
                            "DECIMAL_DIGITS", "NULLABLE", "ORDINAL_POSITION", "IS_NULLABLE", "IS_AUTOINCREMENT"));
                }
            });
            check("primarykeys", () -> {
                try (ResultSet rs = md.getPrimaryKeys(null, "sales", "orders")) {
                    print("primarykeys", lines(rs, "TABLE_SCHEM", "TABLE_NAME", "COLUMN_NAME", "KEY_SEQ", "PK_NAME"));
                }
            });
            check("schemas", () -> {
                try (ResultSet rs = md.getSchemas(null, "sales")) {
                    print("schemas", lines(rs, "TABLE_SCHEM"));
                }
            });
        }
    }

    static void run(String url, String denyURL) throws Exception {
        String base = url + (url.contains("?") ? "&" : "?");
        try (Connection c = DriverManager.getConnection(base + "prepareThreshold=5")) {
            // A PreparedStatement with parameters of two types.
            check("params", () -> {
                try (PreparedStatement ps = c.prepareStatement(
                        "SELECT id, ssn, email, amount, order_date FROM sales.orders WHERE id > ? AND customer <> ? ORDER BY id")) {
                    ps.setInt(1, 1);
                    ps.setString(2, "nobody");
                    try (ResultSet rs = ps.executeQuery()) {
                        print("params", all(rs));
                    }
                }
            });
            check("rsmeta", () -> {
                try (Statement st = c.createStatement();
                        ResultSet rs = st.executeQuery("SELECT id, ssn, amount FROM sales.orders WHERE id = 1")) {
                    ResultSetMetaData m = rs.getMetaData();
                    List<String> cols = new ArrayList<>();
                    for (int i = 1; i <= m.getColumnCount(); i++) {
                        cols.add(m.getColumnLabel(i) + " " + m.getColumnTypeName(i) + "(" + m.getPrecision(i) + "," + m.getScale(i) + ")"
                                + " table=" + m.getTableName(i) + " nullable=" + m.isNullable(i));
                    }
                    print("rsmeta", cols);
                }
            });

            // prepareThreshold=5: the fifth execution prepares S_1 on the
            // server, later ones only Bind it (binary results for int4).
            PreparedStatement ps = c.prepareStatement("SELECT id, ssn FROM sales.orders WHERE id = ?");
            int[] ids = {1, 3, 5, 1, 3, 5, 1};
            for (int i = 0; i < ids.length; i++) {
                int n = i + 1;
                check("exec " + n, () -> {
                    synchronized (sent) {
                        sent.clear();
                    }
                    ps.setInt(1, ids[n - 1]);
                    try (ResultSet rs = ps.executeQuery()) {
                        List<String> r = all(rs);
                        synchronized (sent) {
                            System.out.println("exec " + n + ": " + String.join(",", r) + " " + String.join(" ", sent));
                        }
                    }
                });
            }
            // The same server-side statement, re-prepared by pgranger under
            // the new policy (ssn MASK_NULL), then under the demo policy
            // again, without the driver noticing: it only Binds S_1.
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
            String[] after = {"after policy change", "after policy restore"};
            int[] afterIDs = {3, 5};
            for (int i = 0; i < after.length; i++) {
                String name = after[i];
                int id = afterIDs[i];
                System.out.println("waiting for policy change");
                System.out.flush();
                in.readLine();
                check(name, () -> {
                    synchronized (sent) {
                        sent.clear();
                    }
                    ps.setInt(1, id);
                    try (ResultSet rs = ps.executeQuery()) {
                        List<String> r = all(rs);
                        synchronized (sent) {
                            System.out.println(name + ": " + String.join(",", r) + " " + String.join(" ", sent));
                        }
                    }
                });
            }
            ps.close();

            // Batches: INSERT into sales.orders is denied by policy (bob has
            // no update access there); the driver reports the
            // batch entry and the server error with their SQLSTATEs.
            check("batch", () -> {
                try (PreparedStatement ins = c.prepareStatement(
                        "INSERT INTO sales.orders (id, customer, region) VALUES (?, ?, ?)")) {
                    for (int i = 0; i < 3; i++) {
                        ins.setInt(1, 100 + i);
                        ins.setString(2, "batch " + i);
                        ins.setString(3, "US");
                        ins.addBatch();
                    }
                    ins.executeBatch();
                    System.out.println("batch: ran");
                } catch (BatchUpdateException e) {
                    SQLException next = e.getNextException();
                    System.out.println("batch: ERROR " + e.getSQLState() + " next " + (next == null ? "none" : next.getSQLState()));
                }
            });
            check("statement batch", () -> {
                try (Statement st = c.createStatement()) {
                    st.addBatch("UPDATE sales.orders SET amount = 0 WHERE id = 1");
                    st.addBatch("DELETE FROM sales.orders WHERE id = 3");
                    st.executeBatch();
                    System.out.println("statement batch: ran");
                } catch (BatchUpdateException e) {
                    System.out.println("statement batch: ERROR " + e.getSQLState());
                }
            });
            check("after batch", () -> {
                try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM sales.orders")) {
                    print("after batch", all(rs));
                }
            });

            // Batches into a table bob may write (update access on
            // mallory.*): six entries, so the driver switches to the
            // server-side statement in the middle of the pipeline; an
            // INSERT … SELECT writes the masked values bob reads (id 2 is
            // filtered out: 0 rows); the rows are read back.
            check("batch write", () -> {
                try (PreparedStatement ins = c.prepareStatement("INSERT INTO mallory.loot (v) VALUES (?)")) {
                    for (int i = 0; i < 6; i++) {
                        ins.setString(1, "jdbc batch " + i);
                        ins.addBatch();
                    }
                    System.out.println("batch write: " + counts(ins.executeBatch()));
                }
            });
            check("batch masked", () -> {
                try (PreparedStatement ins = c.prepareStatement(
                        "INSERT INTO mallory.loot (v) SELECT 'jdbc ssn ' || id || ' ' || ssn FROM sales.orders WHERE id = ?")) {
                    for (int id : new int[] {1, 2, 3}) {
                        ins.setInt(1, id);
                        ins.addBatch();
                    }
                    System.out.println("batch masked: " + counts(ins.executeBatch()));
                }
            });
            // A batch whose second entry is denied fails as a whole: it ran
            // in one implicit transaction, so its first row is gone too.
            check("batch mixed", () -> {
                try (Statement st = c.createStatement()) {
                    st.addBatch("INSERT INTO mallory.loot (v) VALUES ('jdbc mixed')");
                    st.addBatch("INSERT INTO sales.orders (id, customer, region) VALUES (98, 'x', 'US')");
                    st.executeBatch();
                    System.out.println("batch mixed: ran");
                } catch (BatchUpdateException e) {
                    System.out.println("batch mixed: ERROR " + e.getSQLState());
                }
            });
            // A batch in a transaction that is rolled back leaves nothing.
            check("batch rollback", () -> {
                c.setAutoCommit(false);
                try (PreparedStatement ins = c.prepareStatement("INSERT INTO mallory.loot (v) VALUES (?)")) {
                    for (int i = 0; i < 2; i++) {
                        ins.setString(1, "jdbc rollback " + i);
                        ins.addBatch();
                    }
                    System.out.println("batch rollback: " + counts(ins.executeBatch()));
                } finally {
                    c.rollback();
                    c.setAutoCommit(true);
                }
            });
            check("batch read", () -> {
                try (Statement st = c.createStatement();
                        ResultSet rs = st.executeQuery("SELECT v FROM mallory.loot WHERE v LIKE 'jdbc %' ORDER BY v COLLATE \"C\"")) {
                    print("batch read", all(rs));
                }
            });

            // A denial in a transaction aborts it, as PostgreSQL's own
            // error would: 25P02 until the rollback.
            c.setAutoCommit(false);
            check("txn first", () -> {
                try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT ssn FROM sales.orders WHERE id = 5")) {
                    print("txn first", all(rs));
                }
            });
            check("txn denied", () -> {
                try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT salary FROM hr.employees")) {
                    print("txn denied", all(rs));
                }
            });
            check("txn aborted", () -> {
                try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT 1")) {
                    print("txn aborted", all(rs));
                }
            });
            c.rollback();
            // A fetch size makes the driver read through a portal with a
            // row limit (PortalSuspended between the batches of rows).
            check("fetchsize", () -> {
                try (PreparedStatement fs = c.prepareStatement("SELECT id, ssn FROM sales.orders WHERE id < ? ORDER BY id")) {
                    fs.setFetchSize(2);
                    fs.setInt(1, 100);
                    try (ResultSet rs = fs.executeQuery()) {
                        print("fetchsize", all(rs));
                    }
                }
            });
            c.commit();
            c.setAutoCommit(true);

            // Statement.setQueryTimeout cancels through a CancelRequest with
            // pgranger's BackendKeyData.
            check("cancel", () -> {
                try (Statement st = c.createStatement()) {
                    st.setQueryTimeout(1);
                    st.executeQuery("SELECT pg_sleep(10)");
                    System.out.println("cancel: not cancelled");
                }
            });
            check("after cancel", () -> {
                try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT ssn FROM sales.orders WHERE id = 3")) {
                    print("after cancel", all(rs));
                }
            });
        }

        // CopyManager: COPY … TO STDOUT of a query and of a table;
        // COPY … FROM STDIN is denied into sales.orders and runs into
        // mallory.loot.
        try (Connection c = DriverManager.getConnection(url)) {
            CopyManager cm = new CopyManager((BaseConnection) c);
            check("copy csv", () -> {
                StringWriter w = new StringWriter();
                long n = cm.copyOut("COPY (SELECT id, ssn, amount FROM sales.orders ORDER BY id) TO STDOUT WITH (FORMAT csv)", w);
                System.out.println("copy csv: " + n + " rows");
                print("copy csv", Arrays.asList(w.toString().split("\n")));
            });
            check("copy table", () -> {
                StringWriter w = new StringWriter();
                cm.copyOut("COPY sales.orders (id, email) TO STDOUT", w);
                print("copy table", Arrays.asList(w.toString().replace('\t', '|').split("\n")));
            });
            check("copy in", () -> {
                cm.copyIn("COPY sales.orders (id, customer, region) FROM STDIN", new StringReader("99\tx\tUS\n"));
                System.out.println("copy in: ran");
            });
            // COPY … FROM STDIN into a table bob may write, text and CSV.
            check("copy in write", () -> {
                long n = cm.copyIn("COPY mallory.loot (v) FROM STDIN", new StringReader("jdbc copy a\njdbc copy b\n"));
                long m = cm.copyIn("COPY mallory.loot (v) FROM STDIN WITH (FORMAT csv)", new StringReader("\"jdbc copy, csv\"\n"));
                System.out.println("copy in write: " + n + " " + m);
                StringWriter w = new StringWriter();
                cm.copyOut("COPY (SELECT v FROM mallory.loot WHERE v LIKE 'jdbc copy%' ORDER BY v COLLATE \"C\") TO STDOUT", w);
                print("copy in read", Arrays.asList(w.toString().split("\n")));
            });
            // search_path set through the driver (setSchema) and at
            // startup (currentSchema): unqualified names resolve alike.
            check("setSchema", () -> {
                c.setSchema("sales");
                try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT id, ssn FROM orders WHERE id = 1")) {
                    print("setSchema " + c.getSchema(), all(rs));
                }
            });
        }
        try (Connection c = DriverManager.getConnection(base + "currentSchema=hr,sales")) {
            check("currentSchema", () -> {
                try (PreparedStatement ps = c.prepareStatement("SELECT id, email FROM employees WHERE id = ?")) {
                    ps.setInt(1, 1);
                    try (ResultSet rs = ps.executeQuery()) {
                        print("currentSchema " + c.getSchema(), all(rs));
                    }
                }
                try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT ssn FROM orders WHERE id = 1")) {
                    print("currentSchema orders", all(rs));
                }
            });
        }

        // LargeObjectManager calls functions through the fast-path
        // interface (FunctionCall), which pgranger refuses in place.
        try (Connection c = DriverManager.getConnection(url)) {
            c.setAutoCommit(false);
            check("large object", () -> {
                long oid = c.unwrap(PGConnection.class).getLargeObjectAPI().createLO();
                System.out.println("large object: created " + oid);
            });
            check("after large object", () -> {
                try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT 1")) {
                    print("after large object", all(rs));
                }
            });
            c.rollback();
            check("after rollback", () -> {
                try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT ssn FROM sales.orders WHERE id = 1")) {
                    print("after rollback", all(rs));
                }
            });
            c.commit();
        }

        // autosave=always wraps each statement in a savepoint: a denial is
        // rolled back to it and the transaction goes on.
        try (Connection c = DriverManager.getConnection(base + "autosave=always")) {
            c.setAutoCommit(false);
            check("autosave denied", () -> {
                try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT salary FROM hr.employees")) {
                    print("autosave denied", all(rs));
                }
            });
            check("autosave next", () -> {
                try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT ssn FROM sales.orders WHERE id = 1")) {
                    print("autosave next", all(rs));
                }
            });
            c.commit();
        }

        // reWriteBatchedInserts: the driver folds a batch of INSERTs into
        // multi-row VALUES statements.
        try (Connection c = DriverManager.getConnection(base + "reWriteBatchedInserts=true")) {
            check("rewritten batch", () -> {
                try (PreparedStatement ins = c.prepareStatement("INSERT INTO mallory.loot (v) VALUES (?)")) {
                    for (int i = 0; i < 3; i++) {
                        ins.setString(1, "jdbc rewritten " + i);
                        ins.addBatch();
                    }
                    System.out.println("rewritten batch: " + counts(ins.executeBatch()));
                }
                try (Statement st = c.createStatement();
                        ResultSet rs = st.executeQuery("SELECT v FROM mallory.loot WHERE v LIKE 'jdbc rewritten%' ORDER BY v COLLATE \"C\"")) {
                    print("rewritten batch", all(rs));
                }
            });
        }

        // The driver's other query modes.
        for (String mode : new String[] {"simple", "extendedForPrepared", "extendedCacheEverything"}) {
            try (Connection c = DriverManager.getConnection(base + "preferQueryMode=" + mode)) {
                check("mode " + mode, () -> {
                    try (PreparedStatement ps = c.prepareStatement("SELECT id, ssn FROM sales.orders WHERE id >= ? ORDER BY id")) {
                        ps.setInt(1, 3);
                        try (ResultSet rs = ps.executeQuery()) {
                            print("mode " + mode, all(rs));
                        }
                    }
                });
            }
        }

        // carol (support) may not read hr.employees at all.
        try (Connection c = DriverManager.getConnection(denyURL)) {
            check("carol denied", () -> {
                try (PreparedStatement ps = c.prepareStatement("SELECT name FROM hr.employees WHERE id = ?")) {
                    ps.setInt(1, 1);
                    try (ResultSet rs = ps.executeQuery()) {
                        print("carol denied", all(rs));
                    }
                }
            });
            check("carol", () -> {
                try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT id, amount FROM sales.orders ORDER BY id")) {
                    print("carol", all(rs));
                }
            });
        }
    }
}
