package org.pgranger.interop.common;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;

/**
 * The protocol loop of an oracle: one JSON object per line on stdin, one JSON
 * object per line on stdout for each, in order. A request's "id" is echoed.
 * A request that fails, for whatever reason, is answered with
 * {"id":…,"error":"…"}; the loop itself only ends when stdin closes, so a
 * caller never waits on a line that will not come.
 */
public final class JsonLines {
    /** Answers one request; whatever it throws becomes an error line. */
    public interface Handler {
        JsonNode handle(ObjectNode request) throws Exception;
    }

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private JsonLines() {
    }

    /** The mapper used for protocol lines (not for Ranger's documents). */
    public static ObjectMapper mapper() {
        return MAPPER;
    }

    /**
     * Serves stdin until it closes. Before the first request a "ready" line
     * carrying hello is written, so the caller can time the start and see
     * what it talks to. System.out is pointed at stderr first: libraries
     * that print must not corrupt the protocol stream.
     */
    public static void serve(ObjectNode hello, Handler handler) throws Exception {
        PrintStream stdout = System.out;
        System.setOut(System.err);
        Writer out = new OutputStreamWriter(stdout, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));

        hello.put("ready", true);
        writeLine(out, hello);

        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            writeLine(out, answer(line, handler));
        }
    }

    static ObjectNode answer(String line, Handler handler) {
        JsonNode id = null;
        try {
            JsonNode req = MAPPER.readTree(line);
            if (!(req instanceof ObjectNode)) {
                return error(null, "a request must be a JSON object");
            }
            id = req.get("id");
            JsonNode res = handler.handle((ObjectNode) req);
            ObjectNode out = res instanceof ObjectNode ? (ObjectNode) res : MAPPER.createObjectNode().set("result", res);
            if (id != null) {
                out.set("id", id);
            }
            return out;
        } catch (Throwable t) {
            // The answer carries the messages; the stack goes to stderr,
            // which the Go side shows when something goes wrong.
            System.err.println("request " + id + " failed:");
            t.printStackTrace(System.err);
            return error(id, describe(t));
        }
    }

    private static ObjectNode error(JsonNode id, String message) {
        ObjectNode out = MAPPER.createObjectNode();
        if (id != null) {
            out.set("id", id);
        }
        out.put("error", message);
        return out;
    }

    /** The class and message of t and of each cause: enough to act on. */
    public static String describe(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (sb.length() > 0) {
                sb.append("; caused by ");
            }
            sb.append(c.getClass().getName());
            if (c.getMessage() != null) {
                sb.append(": ").append(c.getMessage());
            }
        }
        return sb.toString();
    }

    private static void writeLine(Writer out, JsonNode node) throws Exception {
        out.write(MAPPER.writeValueAsString(node));
        out.write('\n');
        out.flush();
    }
}
