package org.pgranger.interop.common;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;

/** Reading request fields strictly: a wrong type is an error, not a default. */
public final class Requests {
    private Requests() {
    }

    /** The text of field name, or null when absent or null. */
    public static String text(JsonNode req, String name) {
        JsonNode v = req.get(name);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isTextual()) {
            throw new IllegalArgumentException("field " + name + " must be a string");
        }
        return v.asText();
    }

    /** The text of field name; absent is an error. */
    public static String requiredText(JsonNode req, String name) {
        String s = text(req, name);
        if (s == null) {
            throw new IllegalArgumentException("field " + name + " is required");
        }
        return s;
    }

    /** A list of strings, or null when absent or null. */
    public static List<String> strings(JsonNode req, String name) {
        JsonNode v = req.get(name);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isArray()) {
            throw new IllegalArgumentException("field " + name + " must be a list of strings");
        }
        List<String> out = new ArrayList<>();
        for (JsonNode e : v) {
            if (!e.isTextual()) {
                throw new IllegalArgumentException("field " + name + " must be a list of strings");
            }
            out.add(e.asText());
        }
        return out;
    }

    /** A boolean, or null when absent or null. */
    public static Boolean bool(JsonNode req, String name) {
        JsonNode v = req.get(name);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isBoolean()) {
            throw new IllegalArgumentException("field " + name + " must be a boolean");
        }
        return v.asBoolean();
    }

    /** A whole number, or null when absent or null. */
    public static Long integer(JsonNode req, String name) {
        JsonNode v = req.get(name);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isIntegralNumber()) {
            throw new IllegalArgumentException("field " + name + " must be an integer");
        }
        return v.asLong();
    }
}
