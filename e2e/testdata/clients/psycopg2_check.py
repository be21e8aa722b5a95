"""psycopg2_check drives psycopg2 through pgranger for e2e/psycopg2_test.go,
which compares what it prints, line by line, with the results it expects.

    /usr/bin/python3 psycopg2_check.py DSN DENY_DSN

Every check prints "name: value" lines; a failing statement prints
"name: ERROR <SQLSTATE>".
"""

import datetime
import decimal
import io
import select
import sys
import threading
import time

import psycopg2
import psycopg2.extensions


def cell(v):
    if v is None:
        return "NULL"
    if isinstance(v, (datetime.date, datetime.datetime)):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v)
    return str(v)


def show(name, rows):
    if not rows:
        print(name + ": (none)")
    for r in rows:
        print(name + ": " + "|".join(cell(v) for v in r))


def check(name, conn, f):
    try:
        f()
    except psycopg2.Error as e:
        print("%s: ERROR %s" % (name, e.pgcode))
        print("%s: %s" % (name, e), file=sys.stderr)
        if conn is not None and not conn.autocommit:
            conn.rollback()


def main(dsn, deny_dsn):
    conn = psycopg2.connect(dsn)
    cur = conn.cursor()

    # Parameters: psycopg2 interpolates them client-side and sends one
    # simple Query.
    def params():
        cur.execute(
            "SELECT id, ssn, email, amount, order_date FROM sales.orders"
            " WHERE id > %s AND customer <> %s ORDER BY id",
            (1, "nobody"),
        )
        show("params", cur.fetchall())
        cur.execute("SELECT ssn FROM sales.orders WHERE id = ANY(%s) ORDER BY id", ([3, 4, 5],))
        show("params array", cur.fetchall())
        cur.execute("SELECT %(a)s::int + %(b)s::int AS s", {"a": 40, "b": 2})
        show("params named", cur.fetchall())
        conn.commit()

    check("params", conn, params)

    # Named (server-side) cursors: DECLARE … CURSOR and FETCH FORWARD n.
    def named():
        with conn.cursor(name="orders_cur") as nc:
            nc.itersize = 2
            nc.execute("SELECT id, ssn, amount FROM sales.orders ORDER BY id")
            show("named", list(nc))
        conn.commit()

    check("named", conn, named)

    def named_fetchmany():
        with conn.cursor(name="orders_many") as nc:
            nc.execute("SELECT id, email FROM sales.orders WHERE id > %s ORDER BY id", (1,))
            show("fetchmany", nc.fetchmany(1))
            show("fetchmany rest", nc.fetchall())
        conn.commit()

    check("fetchmany", conn, named_fetchmany)

    def scrollable():
        with conn.cursor(name="orders_scroll", scrollable=True) as nc:
            nc.execute("SELECT id, ssn FROM sales.orders ORDER BY id")
            show("scroll first", nc.fetchmany(2))
            nc.scroll(0, mode="absolute")
            show("scroll again", [nc.fetchone()])
        conn.commit()

    check("scroll", conn, scrollable)

    def withhold():
        nc = conn.cursor(name="orders_hold", withhold=True)
        nc.execute("SELECT id, ssn FROM sales.orders ORDER BY id")
        conn.commit()  # a WITH HOLD cursor outlives its transaction
        show("withhold", nc.fetchall())
        nc.close()

    check("withhold", conn, withhold)

    # copy_expert with COPY … TO STDOUT: a table and a query, text and CSV.
    def copy_out():
        for name, sql in (
            ("copy table", "COPY sales.orders (id, ssn, email) TO STDOUT"),
            ("copy csv", "COPY (SELECT id, ssn, amount FROM sales.orders WHERE id > 1 ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER)"),
        ):
            buf = io.StringIO()
            cur.copy_expert(sql, buf)
            for line in buf.getvalue().splitlines():
                print(name + ": " + line.replace("\t", "|"))
        conn.commit()

    check("copy", conn, copy_out)
    check("copy denied column", conn, lambda: cur.copy_expert("COPY hr.employees (salary) TO STDOUT", io.StringIO()))
    check("copy from", conn, lambda: cur.copy_expert("COPY sales.orders (id, customer, region) FROM STDIN", io.StringIO("99\tx\tUS\n")))

    # Writes into a table bob may write (update access on mallory.*):
    # copy_expert and copy_from with COPY … FROM STDIN, executemany, an
    # INSERT … SELECT … RETURNING of masked values (order 2 is filtered
    # out), a rolled-back INSERT; the rows are read back.
    def writes():
        cur.copy_expert("COPY mallory.loot (v) FROM STDIN", io.StringIO("py copy a\npy copy b\n"))
        print("copy_expert from: %d" % cur.rowcount)
        cur.copy_expert("COPY mallory.loot (v) FROM STDIN WITH (FORMAT csv)", io.StringIO('"py copy, csv"\n'))
        print("copy_expert csv from: %d" % cur.rowcount)
        # copy_from quotes its table name as one identifier: the schema
        # comes from search_path.
        cur.execute("SET search_path = mallory, public")
        cur.copy_from(io.StringIO("py copy_from\n"), "loot", columns=("v",))
        print("copy_from: %d" % cur.rowcount)
        cur.execute("RESET search_path")
        cur.executemany("INSERT INTO mallory.loot (v) VALUES (%s)", [("py many %d" % i,) for i in range(3)])
        print("executemany: %d" % cur.rowcount)
        cur.execute(
            "INSERT INTO mallory.loot (v) SELECT 'py ssn ' || id || ' ' || ssn FROM sales.orders"
            " WHERE id = ANY(%s) RETURNING v", ([1, 2, 3],))
        show("returning", sorted(cur.fetchall()))
        conn.commit()
        cur.execute("INSERT INTO mallory.loot (v) VALUES (%s)", ("py rolled back",))
        conn.rollback()
        cur.execute("SELECT v FROM mallory.loot WHERE v LIKE %s ORDER BY v COLLATE \"C\"", ("py %",))
        show("written", cur.fetchall())
        conn.commit()

    check("writes", conn, writes)

    # A denial in a transaction aborts it: 25P02 until the rollback.
    def txn():
        cur.execute("SELECT ssn FROM sales.orders WHERE id = 5")
        show("txn first", cur.fetchall())
        try:
            cur.execute("SELECT salary FROM hr.employees")
        except psycopg2.Error as e:
            print("txn denied: ERROR %s" % e.pgcode)
        try:
            cur.execute("SELECT 1")
        except psycopg2.Error as e:
            print("txn aborted: ERROR %s" % e.pgcode)
        conn.rollback()
        cur.execute("SELECT ssn FROM sales.orders WHERE id = 3")
        show("txn after rollback", cur.fetchall())
        conn.commit()

    check("txn", conn, txn)

    # conn.cancel() sends a CancelRequest with pgranger's key.
    def cancel():
        t = threading.Timer(0.3, conn.cancel)
        t.start()
        try:
            cur.execute("SELECT pg_sleep(10)")
            print("cancel: not cancelled")
        finally:
            t.cancel()

    check("cancel", conn, cancel)
    check("after cancel", conn, lambda: (cur.execute("SELECT ssn FROM sales.orders WHERE id = 1"), show("after cancel", cur.fetchall())))

    # LISTEN/NOTIFY between two sessions.
    def notify():
        listener = psycopg2.connect(dsn)
        listener.set_isolation_level(psycopg2.extensions.ISOLATION_LEVEL_AUTOCOMMIT)
        listener.cursor().execute("LISTEN pgranger_e2e")
        conn.commit()
        cur.execute("NOTIFY pgranger_e2e, 'hello'")
        conn.commit()  # delivered at commit
        deadline = time.time() + 5
        while not listener.notifies and time.time() < deadline:
            select.select([listener], [], [], 0.5)
            listener.poll()
        for n in listener.notifies:
            print("notify: %s %s" % (n.channel, n.payload))
        listener.close()

    check("notify", conn, notify)

    # lobject uses libpq's large-object API, which calls functions through
    # the fast-path interface (FunctionCall): refused in place, and the
    # connection goes on.
    def large_object():
        try:
            conn.lobject(0, "rb")
            print("lobject: opened")
        except psycopg2.OperationalError as e:
            print("lobject: %s %s" % (type(e).__name__, "fast-path function calls" in str(e)))
        conn.rollback()
        cur.execute("SELECT ssn FROM sales.orders WHERE id = 3")
        show("after lobject", cur.fetchall())
        conn.commit()

    check("lobject", conn, large_object)

    # A read-only session: psycopg2 opens each transaction READ ONLY, and
    # reads of row-filtered tables need nothing written on the backend.
    def readonly():
        conn.set_session(readonly=True)
        cur.execute("SELECT id, ssn FROM sales.orders WHERE id = %s", (5,))
        show("readonly", cur.fetchall())
        cur.execute("SELECT id FROM sales.orders WHERE 1/(amount - 830) <> 0 ORDER BY id")
        show("readonly oracle", cur.fetchall())
        cur.execute("SHOW transaction_read_only")
        show("readonly txn", cur.fetchall())
        conn.commit()
        conn.set_session(readonly=False)

    check("readonly", conn, readonly)
    conn.close()

    # carol (support) may not read hr.employees; amount is MASK_NULL.
    carol = psycopg2.connect(deny_dsn)
    ccur = carol.cursor()
    check("carol denied", carol, lambda: ccur.execute("SELECT name FROM hr.employees WHERE id = %s", (1,)))
    check("carol", carol, lambda: (ccur.execute("SELECT id, amount FROM sales.orders ORDER BY id"), show("carol", ccur.fetchall())))
    carol.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
