package org.pgranger.interop.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.pgranger.interop.common.JsonLines;
import org.pgranger.interop.common.Requests;

import java.util.ArrayList;
import java.util.List;

/**
 * A local SparkSession (one executor thread, UTC, no UI) as a JSON-lines
 * oracle. A request
 * <pre>{"op":"mask", "maskType":"MASK_SHOW_LAST_4", "type":"string", "values":["111-11-1111", null]}</pre>
 * is answered with {"expression":…, "resultType":…, "results":[…]}: each
 * value, given as text, is cast to the Spark type as CAST(v AS type) does,
 * the column is replaced by the expression Kyuubi's plugin would put in its
 * place (Masks), and each result is printed as CAST(r AS STRING) prints it
 * (null for NULL). {"op":"sql","sql":…} answers the rows of any query as
 * text, for checks of Spark's own behaviour.
 */
public final class SparkOracle {
    private static SparkSession spark;
    private static RangerAuthz authz;
    private static Governed governed;

    public static void main(String[] args) throws Exception {
        spark = SparkSession.builder()
                .appName("pgranger-spark-oracle")
                .master("local[1]")
                .config("spark.ui.enabled", "false")
                .config("spark.sql.session.timeZone", "UTC")
                .config("spark.sql.shuffle.partitions", "1")
                .config("spark.sql.ansi.enabled", "false")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.driver.host", "127.0.0.1")
                .getOrCreate();
        spark.sparkContext().setLogLevel("ERROR");
        // The first query loads the analyzer and code generator: pay it
        // before the ready line, so the start time covers it.
        spark.sql("SELECT regexp_replace('a', '[a-z]', 'x')").collectAsList();
        ObjectNode hello = JsonLines.mapper().createObjectNode();
        hello.put("oracle", "spark");
        hello.put("sparkVersion", spark.version());
        hello.put("java", System.getProperty("java.version"));
        JsonLines.serve(hello, SparkOracle::handle);
    }

    static JsonNode handle(ObjectNode req) throws Exception {
        String op = Requests.requiredText(req, "op");
        switch (op) {
            case "mask":
                return mask(req);
            case "sql":
                return sql(Requests.requiredText(req, "sql"));
            case "ranger":
                return ranger(req);
            case "catalog":
                return catalog(req);
            case "query":
                if (governed == null) {
                    throw new IllegalStateException("send ranger and catalog first");
                }
                return governed.query(Requests.requiredText(req, "user"), Requests.strings(req, "groups"), Requests.requiredText(req, "sql"));
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    private static JsonNode mask(ObjectNode req) {
        String maskType = Requests.requiredText(req, "maskType");
        String type = Requests.requiredText(req, "type");
        if (!type.matches("[a-z]+(\\(\\d+(,\\s*\\d+)?\\))?")) {
            throw new IllegalArgumentException("type " + type + " is not a Spark type name");
        }
        JsonNode values = req.get("values");
        if (values == null || !values.isArray()) {
            throw new IllegalArgumentException("field values must be a list of strings and nulls");
        }
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < values.size(); i++) {
            JsonNode v = values.get(i);
            if (v != null && !v.isNull() && !v.isTextual()) {
                throw new IllegalArgumentException("value " + i + " must be a string or null");
            }
            rows.add(RowFactory.create(i, v == null || v.isNull() ? null : v.asText()));
        }
        StructType schema = new StructType()
                .add("i", DataTypes.IntegerType, false)
                .add("v", DataTypes.StringType, true);
        spark.createDataFrame(rows, schema).createOrReplaceTempView("oracle_input");
        String expr = Masks.expression(maskType, "c", Requests.text(req, "customValue"));
        String query = "SELECT CAST(m AS STRING) AS r, typeof(m) AS t FROM (SELECT i, " + expr
                + " AS m FROM (SELECT i, CAST(v AS " + type + ") AS c FROM oracle_input)) ORDER BY i";
        Dataset<Row> ds = spark.sql(query);
        ObjectNode out = JsonLines.mapper().createObjectNode();
        out.put("expression", expr);
        ArrayNode results = out.putArray("results");
        String resultType = null;
        for (Row r : ds.collectAsList()) {
            results.add(r.isNullAt(0) ? null : r.getString(0));
            resultType = r.getString(1);
        }
        out.put("resultType", resultType);
        return out;
    }

    /** Starts Ranger's plugin: {"url", "service", "cacheDir"}. */
    private static JsonNode ranger(ObjectNode req) throws Exception {
        if (authz != null) {
            throw new IllegalStateException("the plugin is started already");
        }
        authz = RangerAuthz.start(Requests.requiredText(req, "url"), Requests.requiredText(req, "service"),
                Requests.requiredText(req, "cacheDir"), 60_000);
        ObjectNode out = JsonLines.mapper().createObjectNode();
        authz.versions().forEach((k, v) -> out.putPOJO(k, v));
        return out;
    }

    /**
     * Points the JDBC catalog "pg" at PostgreSQL: {"url", "user",
     * "password", "tables": {"namespace": ["table", …]}}.
     */
    private static JsonNode catalog(ObjectNode req) {
        if (authz == null) {
            throw new IllegalStateException("send ranger first");
        }
        String c = "spark.sql.catalog.pg";
        spark.conf().set(c, "org.apache.spark.sql.execution.datasources.v2.jdbc.JDBCTableCatalog");
        spark.conf().set(c + ".url", Requests.requiredText(req, "url"));
        spark.conf().set(c + ".user", Requests.requiredText(req, "user"));
        spark.conf().set(c + ".password", Requests.requiredText(req, "password"));
        spark.conf().set(c + ".driver", "org.postgresql.Driver");
        JsonNode t = req.get("tables");
        if (t == null || !t.isObject()) {
            throw new IllegalArgumentException("tables must be an object of namespace to table names");
        }
        java.util.Map<String, List<String>> tables = new java.util.LinkedHashMap<>();
        t.fields().forEachRemaining(e -> {
            List<String> names = new ArrayList<>();
            e.getValue().forEach(n -> names.add(n.asText()));
            tables.put(e.getKey(), names);
        });
        governed = new Governed(spark, authz, tables);
        return JsonLines.mapper().createObjectNode().put("ok", true);
    }

    private static JsonNode sql(String query) {
        Dataset<Row> ds = spark.sql(query);
        ObjectNode out = JsonLines.mapper().createObjectNode();
        ArrayNode cols = out.putArray("columns");
        for (String c : ds.columns()) {
            cols.add(c);
        }
        ArrayNode rows = out.putArray("rows");
        for (Row r : ds.collectAsList()) {
            ArrayNode row = rows.addArray();
            for (int i = 0; i < r.length(); i++) {
                row.add(r.isNullAt(i) ? null : String.valueOf(r.get(i)));
            }
        }
        return out;
    }
}
