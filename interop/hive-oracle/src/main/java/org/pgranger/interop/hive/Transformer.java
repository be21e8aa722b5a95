package org.pgranger.interop.hive;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A Ranger data-mask transformer as Hive would parse it: a function name, the
 * column placeholder {col} as its first argument, then literals. An integer
 * literal (sign allowed, as Hive folds -1 to a constant) is an int constant,
 * a single-quoted literal a string constant; nothing else is accepted.
 */
final class Transformer {
    final String function;
    /** Integer or String per constant argument after {col}. */
    final List<Object> constants;

    private Transformer(String function, List<Object> constants) {
        this.function = function;
        this.constants = constants;
    }

    static Transformer parse(String text) {
        String s = text.trim();
        int open = s.indexOf('(');
        if (open <= 0 || !s.endsWith(")")) {
            throw new IllegalArgumentException("transformer " + text + ": want name({col}, literal, …)");
        }
        String name = s.substring(0, open).trim().toLowerCase();
        List<String> args = split(s.substring(open + 1, s.length() - 1), text);
        if (args.isEmpty() || !args.get(0).equals("{col}")) {
            throw new IllegalArgumentException("transformer " + text + ": the first argument must be {col}");
        }
        List<Object> constants = new ArrayList<>();
        for (String a : args.subList(1, args.size())) {
            constants.add(literal(a, text));
        }
        return new Transformer(name, Collections.unmodifiableList(constants));
    }

    private static Object literal(String a, String text) {
        if (a.length() >= 2 && a.startsWith("'") && a.endsWith("'")) {
            return a.substring(1, a.length() - 1).replace("\\'", "'").replace("''", "'");
        }
        try {
            return Integer.valueOf(a);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("transformer " + text + ": argument " + a + " is neither an integer nor a quoted string");
        }
    }

    /** Top-level commas only; quotes may hold commas. */
    private static List<String> split(String inner, String text) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < inner.length(); i++) {
            char c = inner.charAt(i);
            if (c == '\'' && (i == 0 || inner.charAt(i - 1) != '\\')) {
                quoted = !quoted;
            }
            if (c == ',' && !quoted) {
                out.add(cur.toString().trim());
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        if (quoted) {
            throw new IllegalArgumentException("transformer " + text + ": unterminated quote");
        }
        if (cur.toString().trim().length() > 0 || !out.isEmpty()) {
            out.add(cur.toString().trim());
        }
        return out;
    }
}
