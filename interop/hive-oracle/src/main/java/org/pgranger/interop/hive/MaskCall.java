package org.pgranger.interop.hive;

import org.apache.hadoop.hive.ql.udf.generic.GenericUDF;
import org.apache.hadoop.hive.ql.udf.generic.GenericUDFMask;
import org.apache.hadoop.hive.ql.udf.generic.GenericUDFMaskFirstN;
import org.apache.hadoop.hive.ql.udf.generic.GenericUDFMaskHash;
import org.apache.hadoop.hive.ql.udf.generic.GenericUDFMaskLastN;
import org.apache.hadoop.hive.ql.udf.generic.GenericUDFMaskShowFirstN;
import org.apache.hadoop.hive.ql.udf.generic.GenericUDFMaskShowLastN;
import org.apache.hadoop.hive.serde2.objectinspector.ObjectInspector;
import org.apache.hadoop.hive.serde2.objectinspector.primitive.PrimitiveObjectInspectorFactory;
import org.apache.hadoop.hive.serde2.typeinfo.TypeInfoFactory;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.Text;

import java.util.ArrayList;
import java.util.List;

/**
 * One of Hive's mask UDFs, instantiated directly (not through the function
 * registry, which needs a whole Hive session), initialized as Hive's planner
 * would for the transformer's call: the column's object inspector first,
 * then a constant object inspector per literal.
 */
final class MaskCall {
    private final GenericUDF udf;
    private final ObjectInspector outputOI;
    private final GenericUDF.DeferredObject[] args;
    private final GenericUDF.DeferredJavaObject column;

    MaskCall(Transformer t, HiveTypes column) throws Exception {
        this.udf = newUdf(t.function);
        ObjectInspector[] ois = new ObjectInspector[1 + t.constants.size()];
        args = new GenericUDF.DeferredObject[ois.length];
        ois[0] = column.writableOI;
        this.column = new GenericUDF.DeferredJavaObject(null);
        args[0] = this.column;
        for (int i = 0; i < t.constants.size(); i++) {
            Object c = t.constants.get(i);
            Object writable;
            if (c instanceof Integer) {
                writable = new IntWritable((Integer) c);
                ois[i + 1] = PrimitiveObjectInspectorFactory.getPrimitiveWritableConstantObjectInspector(TypeInfoFactory.intTypeInfo, writable);
            } else {
                writable = new Text((String) c);
                ois[i + 1] = PrimitiveObjectInspectorFactory.getPrimitiveWritableConstantObjectInspector(TypeInfoFactory.stringTypeInfo, writable);
            }
            args[i + 1] = new GenericUDF.DeferredJavaObject(writable);
        }
        this.outputOI = udf.initialize(ois);
    }

    ObjectInspector outputOI() {
        return outputOI;
    }

    /** The UDF's result for one value of the column (null = SQL NULL). */
    Object evaluate(Object value) throws Exception {
        GenericUDF.DeferredObject[] a = args.clone();
        a[0] = new GenericUDF.DeferredJavaObject(value);
        return udf.evaluate(a);
    }

    /** The mask functions Hive 3.1 registers, by their SQL names. */
    static GenericUDF newUdf(String name) {
        switch (name) {
            case "mask":
                return new GenericUDFMask();
            case "mask_show_last_n":
                return new GenericUDFMaskShowLastN();
            case "mask_show_first_n":
                return new GenericUDFMaskShowFirstN();
            case "mask_last_n":
                return new GenericUDFMaskLastN();
            case "mask_first_n":
                return new GenericUDFMaskFirstN();
            case "mask_hash":
                return new GenericUDFMaskHash();
            default:
                throw new IllegalArgumentException("unknown mask function " + name);
        }
    }

    static List<String> functions() {
        List<String> out = new ArrayList<>();
        out.add("mask");
        out.add("mask_show_last_n");
        out.add("mask_show_first_n");
        out.add("mask_last_n");
        out.add("mask_first_n");
        out.add("mask_hash");
        return out;
    }
}
