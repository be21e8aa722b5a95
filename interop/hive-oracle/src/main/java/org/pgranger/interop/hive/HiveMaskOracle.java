package org.pgranger.interop.hive;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.hadoop.hive.ql.udf.generic.GenericUDFMask;
import org.pgranger.interop.common.JsonLines;
import org.pgranger.interop.common.Requests;

import java.io.InputStream;
import java.util.Properties;

/**
 * Apache Hive's mask UDFs as a JSON-lines oracle. A request
 * <pre>{"op":"mask", "transformer":"mask_show_last_n({col}, 4, 'x', 'x', 'x', -1, '1')",
 *  "type":"varchar(20)", "values":["111-11-1111", null, …], "cast":false}</pre>
 * is answered with {"results":[…]}: each value, given in Hive's text form,
 * is converted to the type as Hive's CAST from string does, passed through
 * the UDF, and printed in Hive's text form (null for NULL). With "cast":true
 * the result is first cast back to the column type, as Ranger's Hive plugin
 * does with every mask. Instead of a transformer, "maskType" MASK_NULL or
 * MASK_NONE asks for the two mask types that call no UDF.
 *
 * <pre>{"op":"cast", "from":"string", "type":"varchar(5)", "values":[…]}</pre>
 * casts values of one type to another as Hive's CAST does: what Ranger's
 * Hive plugin does with the result of a CUSTOM mask's expression.
 */
public final class HiveMaskOracle {
    public static void main(String[] args) throws Exception {
        ObjectNode hello = JsonLines.mapper().createObjectNode();
        hello.put("oracle", "hive");
        hello.put("hiveVersion", hiveVersion());
        hello.put("java", System.getProperty("java.version"));
        ArrayNode fns = hello.putArray("functions");
        MaskCall.functions().forEach(fns::add);
        JsonLines.serve(hello, HiveMaskOracle::handle);
    }

    static JsonNode handle(ObjectNode req) throws Exception {
        String op = Requests.requiredText(req, "op");
        if (!op.equals("mask") && !op.equals("cast")) {
            throw new IllegalArgumentException("unknown op " + op);
        }
        HiveTypes type = HiveTypes.of(Requests.requiredText(req, "type"));
        JsonNode values = req.get("values");
        if (values == null || !values.isArray()) {
            throw new IllegalArgumentException("field values must be a list of strings and nulls");
        }
        if (op.equals("cast")) {
            return cast(HiveTypes.of(Requests.requiredText(req, "from")), type, values);
        }
        boolean cast = Boolean.TRUE.equals(Requests.bool(req, "cast"));
        String maskType = Requests.text(req, "maskType");
        String transformer = Requests.text(req, "transformer");
        if ((maskType == null) == (transformer == null)) {
            throw new IllegalArgumentException("give exactly one of transformer and maskType");
        }

        ObjectNode out = JsonLines.mapper().createObjectNode();
        ArrayNode results = out.putArray("results");
        if (maskType != null) {
            switch (maskType) {
                case "MASK_NULL":
                    for (int i = 0; i < values.size(); i++) {
                        input(type, values.get(i), i);
                        results.addNull();
                    }
                    return out;
                case "MASK_NONE":
                    for (int i = 0; i < values.size(); i++) {
                        results.add(HiveTypes.render(input(type, values.get(i), i), type.writableOI));
                    }
                    return out;
                default:
                    throw new IllegalArgumentException("maskType " + maskType + " calls a UDF: send its transformer instead");
            }
        }

        MaskCall call = new MaskCall(Transformer.parse(transformer), type);
        for (int i = 0; i < values.size(); i++) {
            Object in = input(type, values.get(i), i);
            Object res = call.evaluate(in);
            String text;
            if (cast) {
                text = HiveTypes.render(type.castFrom(res, call.outputOI()), type.writableOI);
            } else {
                text = HiveTypes.heldText(res, call.outputOI());
            }
            results.add(text);
        }
        return out;
    }

    /** Each value read as type from, then cast to type to. */
    private static JsonNode cast(HiveTypes from, HiveTypes to, JsonNode values) {
        ObjectNode out = JsonLines.mapper().createObjectNode();
        ArrayNode results = out.putArray("results");
        for (int i = 0; i < values.size(); i++) {
            results.add(HiveTypes.render(to.castFrom(input(from, values.get(i), i), from.writableOI), to.writableOI));
        }
        return out;
    }

    private static Object input(HiveTypes type, JsonNode v, int i) {
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isTextual()) {
            throw new IllegalArgumentException("value " + i + " must be a string (Hive's text form) or null");
        }
        return type.parse(v.asText(), i);
    }

    static String hiveVersion() {
        try (InputStream in = GenericUDFMask.class.getResourceAsStream("/META-INF/maven/org.apache.hive/hive-exec/pom.properties")) {
            if (in != null) {
                Properties p = new Properties();
                p.load(in);
                return p.getProperty("version");
            }
        } catch (Exception ignored) {
            // fall through to the manifest
        }
        return GenericUDFMask.class.getPackage().getImplementationVersion();
    }
}
