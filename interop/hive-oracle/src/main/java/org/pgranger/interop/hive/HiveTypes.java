package org.pgranger.interop.hive;

import org.apache.hadoop.hive.common.type.Date;
import org.apache.hadoop.hive.common.type.HiveChar;
import org.apache.hadoop.hive.serde2.io.DateWritableV2;
import org.apache.hadoop.hive.serde2.io.HiveCharWritable;
import org.apache.hadoop.hive.serde2.io.HiveVarcharWritable;
import org.apache.hadoop.hive.serde2.objectinspector.ObjectInspector;
import org.apache.hadoop.hive.serde2.objectinspector.ObjectInspectorConverters;
import org.apache.hadoop.hive.serde2.objectinspector.ObjectInspectorUtils;
import org.apache.hadoop.hive.serde2.objectinspector.PrimitiveObjectInspector;
import org.apache.hadoop.hive.common.type.HiveDecimal;
import org.apache.hadoop.hive.serde2.objectinspector.primitive.BooleanObjectInspector;
import org.apache.hadoop.hive.serde2.objectinspector.primitive.DateObjectInspector;
import org.apache.hadoop.hive.serde2.objectinspector.primitive.HiveDecimalObjectInspector;
import org.apache.hadoop.hive.serde2.typeinfo.DecimalTypeInfo;
import org.apache.hadoop.hive.serde2.objectinspector.primitive.HiveCharObjectInspector;
import org.apache.hadoop.hive.serde2.objectinspector.primitive.PrimitiveObjectInspectorFactory;
import org.apache.hadoop.hive.serde2.objectinspector.primitive.PrimitiveObjectInspectorUtils;
import org.apache.hadoop.hive.serde2.typeinfo.PrimitiveTypeInfo;
import org.apache.hadoop.hive.serde2.typeinfo.TypeInfo;
import org.apache.hadoop.hive.serde2.typeinfo.TypeInfoUtils;

import java.time.LocalDate;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.format.ResolverStyle;

/**
 * A Hive column type: its writable object inspector, how a value in text
 * becomes a value of the type, and how a value is printed back.
 *
 * Integers and dates are read strictly (Java's parsers, ISO dates with an
 * optional sign), because Hive's own string conversion is lenient: it wraps
 * '300' into a tinyint and rolls 2024-02-30 over to March; a test value
 * must mean what it says. Other types go through Hive's conversion, as CAST
 * from string does. Dates print in ISO numbering (year 0 is "0000", 44 BC
 * is "-0043"): Hive's own Date.toString prints the year of era without the
 * era, so its year 0 shows as "0001-01-01", the same text as 1 AD.
 */
final class HiveTypes {
    private static final DateTimeFormatter ISO_DATE = DateTimeFormatter.ofPattern("uuuu-MM-dd").withResolverStyle(ResolverStyle.STRICT);

    final PrimitiveTypeInfo typeInfo;
    final PrimitiveObjectInspector writableOI;
    private final ObjectInspectorConverters.Converter fromString;

    private HiveTypes(PrimitiveTypeInfo typeInfo) {
        this.typeInfo = typeInfo;
        this.writableOI = PrimitiveObjectInspectorFactory.getPrimitiveWritableObjectInspector(typeInfo);
        this.fromString = ObjectInspectorConverters.getConverter(PrimitiveObjectInspectorFactory.javaStringObjectInspector, writableOI);
    }

    static HiveTypes of(String name) {
        TypeInfo ti = TypeInfoUtils.getTypeInfoFromTypeString(name);
        if (!(ti instanceof PrimitiveTypeInfo)) {
            throw new IllegalArgumentException("type " + name + " is not a primitive Hive type");
        }
        return new HiveTypes((PrimitiveTypeInfo) ti);
    }

    /** The value of text in this type; text that is not one is an error. */
    Object parse(String text, int index) {
        switch (writableOI.getPrimitiveCategory()) {
            case BYTE:
                checkInteger(text, index, Byte.MIN_VALUE, Byte.MAX_VALUE);
                break;
            case SHORT:
                checkInteger(text, index, Short.MIN_VALUE, Short.MAX_VALUE);
                break;
            case INT:
                checkInteger(text, index, Integer.MIN_VALUE, Integer.MAX_VALUE);
                break;
            case LONG:
                checkInteger(text, index, Long.MIN_VALUE, Long.MAX_VALUE);
                break;
            case DATE:
                try {
                    LocalDate d = LocalDate.parse(text, ISO_DATE);
                    return new DateWritableV2(Date.ofEpochDay((int) d.toEpochDay()));
                } catch (DateTimeParseException e) {
                    throw new IllegalArgumentException("value " + index + " (" + text + ") is not an ISO date (uuuu-MM-dd)");
                }
            default:
                break;
        }
        Object v = fromString.convert(text);
        if (v == null) {
            throw new IllegalArgumentException("value " + index + " (" + text + ") is not a " + typeInfo.getTypeName());
        }
        // Converters reuse one writable for every value: keep a copy.
        return ObjectInspectorUtils.copyToStandardObject(v, writableOI, ObjectInspectorUtils.ObjectInspectorCopyOption.WRITABLE);
    }

    private void checkInteger(String text, int index, long min, long max) {
        long v;
        try {
            v = Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("value " + index + " (" + text + ") is not an integer");
        }
        if (v < min || v > max) {
            throw new IllegalArgumentException("value " + index + " (" + text + ") is out of range for " + typeInfo.getTypeName());
        }
    }

    /** A value of this type converted from a value of oi's type (CAST). */
    Object castFrom(Object v, ObjectInspector oi) {
        if (v == null) {
            return null;
        }
        return ObjectInspectorConverters.getConverter(oi, writableOI).convert(v);
    }

    /**
     * The text form of v, a value described by oi: CHAR keeps its pad spaces
     * (Hive prints char(n) values padded), DATE is ISO (see the class
     * comment), BOOLEAN and DECIMAL as Hive's text output writes them (true,
     * 1.50 for a decimal(p,2)), every other type as Hive converts it to a
     * string.
     */
    static String render(Object v, ObjectInspector oi) {
        if (v == null) {
            return null;
        }
        PrimitiveObjectInspector poi = (PrimitiveObjectInspector) oi;
        switch (poi.getPrimitiveCategory()) {
            case CHAR: {
                HiveChar c = ((HiveCharObjectInspector) poi).getPrimitiveJavaObject(v);
                return c == null ? null : c.getValue();
            }
            case DATE: {
                Date d = ((DateObjectInspector) poi).getPrimitiveJavaObject(v);
                return d == null ? null : LocalDate.ofEpochDay(d.toEpochDay()).format(ISO_DATE);
            }
            case BOOLEAN:
                // As Hive's text output writes it (CAST to string says TRUE).
                return String.valueOf(((BooleanObjectInspector) poi).get(v));
            case DECIMAL: {
                // With the type's scale, as Hive 3 prints decimal(p,s).
                HiveDecimal d = ((HiveDecimalObjectInspector) poi).getPrimitiveJavaObject(v);
                int scale = ((DecimalTypeInfo) poi.getTypeInfo()).getScale();
                return d == null ? null : d.toFormatString(scale);
            }
            default:
                return PrimitiveObjectInspectorUtils.getString(v, poi);
        }
    }

    /**
     * The text a UDF's result holds, before any cast: the UDFs declare
     * char and varchar results without a length, so the held text is the
     * result, not the declared type's padding of it.
     */
    static String heldText(Object v, ObjectInspector oi) {
        if (v instanceof HiveCharWritable) {
            return ((HiveCharWritable) v).getTextValue().toString();
        }
        if (v instanceof HiveVarcharWritable) {
            return ((HiveVarcharWritable) v).getTextValue().toString();
        }
        return render(v, oi);
    }
}
