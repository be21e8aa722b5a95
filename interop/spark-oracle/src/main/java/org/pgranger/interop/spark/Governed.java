package org.pgranger.interop.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.SubqueryExpression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.View;
import org.apache.spark.sql.types.StructField;
import org.pgranger.interop.common.JsonLines;
import scala.collection.JavaConverters;
import scala.runtime.BoxedUnit;

import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Queries as a user, governed the way Kyuubi's Spark AuthZ plugin governs
 * them, with Ranger's real plugin deciding: every column the analysed plan
 * reads of each governed table needs select (a table read without columns
 * is a table-level request), then each table is read through its row
 * filter (Spark's parser reads Ranger's expression) and with each masked
 * column replaced by the mask's Spark expression (Masks). The plugin
 * itself cannot be loaded here (Kyuubi's jars are not served), so this is
 * its behaviour as its documentation and source describe it, written with
 * session-catalog views: database.table names a view over the JDBC table
 * pg.database.table holding the user's row filter and masks, made again
 * when the user changes.
 */
final class Governed {
    private final SparkSession spark;
    private final RangerAuthz authz;
    /** Governed tables: namespace → tables, as the JDBC catalog "pg" has them. */
    private final Map<String, List<String>> tables;
    /** Whose views the session catalog holds now (user and groups). */
    private String viewsOf;

    Governed(SparkSession spark, RangerAuthz authz, Map<String, List<String>> tables) {
        this.spark = spark;
        this.authz = authz;
        this.tables = tables;
        for (String db : tables.keySet()) {
            spark.sql("CREATE DATABASE IF NOT EXISTS `" + db + "`");
        }
        this.viewsOf = null;
    }

    /** Runs sql as user in groups inside UGI.doAs, as Kyuubi's users run. */
    JsonNode query(String user, List<String> groups, String sql) throws Exception {
        UserGroupInformation ugi = UserGroupInformation.createUserForTesting(user, groups.toArray(new String[0]));
        return ugi.doAs((PrivilegedExceptionAction<JsonNode>) () -> run(sql));
    }

    private JsonNode run(String sql) throws Exception {
        UserGroupInformation ugi = UserGroupInformation.getCurrentUser();
        String user = ugi.getShortUserName();
        Set<String> groups = new LinkedHashSet<>(List.of(ugi.getGroupNames()));
        ObjectNode out = JsonLines.mapper().createObjectNode();

        // 1. What the statement reads: the columns of each governed view
        // that operators outside the views reference. The walk does not
        // enter a view, so its row filter and masks (and the tables of a
        // filter's subquery) are not the statement's reads, as in Kyuubi,
        // which checks the plan before it adds them.
        views(user, groups);
        Dataset<Row> ds = spark.sql(sql);
        LogicalPlan plan = ds.queryExecution().analyzed();
        List<View> found = new ArrayList<>();
        Set<Long> refs = new HashSet<>();
        walk(plan, found, refs);
        Map<String, TreeSet<String>> reads = new LinkedHashMap<>();
        for (View v : found) {
            String key = v.desc().identifier().database().get() + "." + v.desc().identifier().table();
            TreeSet<String> cols = reads.computeIfAbsent(key, k -> new TreeSet<>());
            for (Attribute a : JavaConverters.seqAsJavaList(v.output())) {
                if (refs.contains(a.exprId().id())) {
                    cols.add(a.name());
                }
            }
        }
        ArrayNode readsNode = out.putArray("reads");
        // 2. Access: select on each column read, or on the table.
        List<String> denied = new ArrayList<>();
        for (Map.Entry<String, TreeSet<String>> e : reads.entrySet()) {
            String[] dt = e.getKey().split("\\.", 2);
            readsNode.add(e.getKey() + "(" + String.join(",", e.getValue()) + ")");
            if (e.getValue().isEmpty()) {
                if (!authz.allowed(dt[0], dt[1], null, user, groups)) {
                    denied.add(e.getKey());
                }
            }
            for (String c : e.getValue()) {
                if (!authz.allowed(dt[0], dt[1], c, user, groups)) {
                    denied.add(e.getKey() + "." + c);
                }
            }
        }
        if (!denied.isEmpty()) {
            out.put("denied", "Permission denied: user [" + user + "] does not have [select] privilege on " + denied);
            return out;
        }
        // 3. The statement, over the views' row filters and masks.
        String[] names = ds.columns();
        ArrayNode cols = out.putArray("columns");
        String[] pos = new String[names.length];
        for (int i = 0; i < names.length; i++) {
            cols.add(names[i]);
            pos[i] = "c" + i;
        }
        ArrayNode types = out.putArray("types");
        for (StructField f : ds.schema().fields()) {
            types.add(f.dataType().simpleString());
        }
        Dataset<Row> renamed = ds.toDF(pos);
        Column[] asText = new Column[pos.length];
        for (int i = 0; i < pos.length; i++) {
            asText[i] = renamed.col(pos[i]).cast("string");
        }
        ArrayNode rows = out.putArray("rows");
        for (Row r : renamed.select(asText).collectAsList()) {
            ArrayNode row = rows.addArray();
            for (int i = 0; i < r.length(); i++) {
                row.add(r.isNullAt(i) ? null : r.getString(i));
            }
        }
        return out;
    }

    /**
     * Makes database.table a view over pg.database.table with user's row
     * filter and masks, unless the session catalog holds user's already.
     */
    private void views(String user, Set<String> groups) {
        String owner = user + "\u0000" + String.join(",", new TreeSet<>(groups));
        if (owner.equals(viewsOf)) {
            return;
        }
        viewsOf = null;
        for (Map.Entry<String, List<String>> e : tables.entrySet()) {
            String db = e.getKey();
            for (String t : e.getValue()) {
                String source = "pg.`" + db + "`.`" + t + "`";
                List<String> items = new ArrayList<>();
                for (StructField f : spark.table(source).schema().fields()) {
                    String m = authz.mask(db, t, f.name(), user, groups);
                    items.add(m == null ? "`" + f.name() + "`" : m + " AS `" + f.name() + "`");
                }
                String filter = authz.rowFilter(db, t, user, groups);
                String where = filter == null ? "" : " WHERE " + filter;
                spark.sql("CREATE OR REPLACE VIEW `" + db + "`.`" + t + "` AS SELECT " + String.join(", ", items) + " FROM " + source + where);
            }
        }
        viewsOf = owner;
    }

    /**
     * Collects the views the plan reads and the ids of the attributes its
     * operators (outside those views, inside subqueries) reference.
     */
    private static void walk(LogicalPlan node, List<View> views, Set<Long> refs) {
        if (node instanceof View) {
            views.add((View) node);
            return;
        }
        for (Attribute a : JavaConverters.asJavaIterable(node.references())) {
            refs.add(a.exprId().id());
        }
        for (Expression e : JavaConverters.seqAsJavaList(node.expressions())) {
            e.foreach(x -> {
                if (x instanceof SubqueryExpression) {
                    walk(((SubqueryExpression) x).plan(), views, refs);
                }
                return BoxedUnit.UNIT;
            });
        }
        for (LogicalPlan c : JavaConverters.seqAsJavaList(node.children())) {
            walk(c, views, refs);
        }
    }
}
