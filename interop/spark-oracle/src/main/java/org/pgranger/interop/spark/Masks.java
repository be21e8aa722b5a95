package org.pgranger.interop.spark;

/**
 * The Spark SQL expression Apache Kyuubi's Spark AuthZ plugin puts in place
 * of a masked column, per Ranger mask type (kyuubi-spark-authz,
 * SparkRangerAdminPlugin.getMaskingExpr, in the releases whose letter and
 * digit replacement ends with a fourth regexp_replace turning every other
 * character into U; earlier releases stop after the digits). Nothing is
 * cast back to the column's type. Kyuubi's jars cannot be fetched where
 * these tests run, so the expressions are written out here and real Spark
 * evaluates them.
 */
final class Masks {
    private Masks() {
    }

    /** The expression for column reference col, or null for MASK_NONE. */
    static String expression(String maskType, String col, String customValue) {
        switch (maskType) {
            case "MASK_NONE":
                return col;
            case "MASK_NULL":
                return "NULL";
            case "CUSTOM":
                return customValue == null ? "NULL" : customValue.replace("{col}", col);
            case "MASK":
                return classes(col, "");
            case "MASK_SHOW_FIRST_4":
                // Spark 3.1 and later: regexp_replace from position 5.
                return classes(col, ", 5");
            case "MASK_SHOW_LAST_4":
                return "concat(" + classes("left(" + col + ", length(" + col + ") - 4)", "") + ", right(" + col + ", 4))";
            case "MASK_HASH":
                return "md5(cast(" + col + " as string))";
            case "MASK_DATE_SHOW_YEAR":
                return "date_trunc('YEAR', " + col + ")";
            default:
                throw new IllegalArgumentException("unknown mask type " + maskType);
        }
    }

    private static String classes(String expr, String pos) {
        String upper = "regexp_replace(" + expr + ", '[A-Z]', 'X'" + pos + ")";
        String lower = "regexp_replace(" + upper + ", '[a-z]', 'x'" + pos + ")";
        String digits = "regexp_replace(" + lower + ", '[0-9]', 'n'" + pos + ")";
        return "regexp_replace(" + digits + ", '[^A-Za-z0-9]', 'U'" + pos + ")";
    }
}
