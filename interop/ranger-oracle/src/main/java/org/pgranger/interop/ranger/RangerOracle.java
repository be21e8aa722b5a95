package org.pgranger.interop.ranger;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.ranger.plugin.policyengine.RangerAccessRequestImpl;
import org.apache.ranger.plugin.policyengine.RangerAccessResult;
import org.apache.ranger.plugin.service.RangerBasePlugin;
import org.apache.ranger.plugin.util.ScriptEngineUtil;
import org.apache.ranger.plugin.util.ServicePolicies;
import org.pgranger.interop.common.JsonLines;
import org.pgranger.interop.common.Requests;

import javax.script.ScriptEngine;
import java.io.InputStream;
import java.util.Properties;

/**
 * Apache Ranger's policy engine as a JSON-lines oracle. Requests:
 * <ul>
 * <li>{"op":"load", servicePolicies, serviceTags?, roles?, userStore?, config?}: a new plugin
 * <li>{"op":"setPolicies", servicePolicies}: RangerBasePlugin.setPolicies on the loaded plugin
 * (a document with policyDeltas is applied as deltas, as the plugin does)
 * <li>{"op":"access"|"mask"|"rowfilter"|"accessinfo", request fields}: one evaluation
 * <li>{"op":"batch", "requests":[…]}: several evaluations in one line, answered with
 * {"results":[…]} in order, each an answer or {"error":…}: a differential run asks
 * thousands of questions per bundle, and one pipe round trip each would dominate it
 * </ul>
 * See internal/interop in the Go tree for the fields.
 */
public final class RangerOracle {
    private RangerBasePlugin plugin;

    public static void main(String[] args) throws Exception {
        ObjectNode hello = JsonLines.mapper().createObjectNode();
        hello.put("oracle", "ranger");
        hello.put("rangerVersion", rangerVersion());
        hello.put("java", System.getProperty("java.version"));
        // Expressions (${{…}}) and script conditions need a JavaScript engine;
        // report which one Ranger finds, or null, so the caller can refuse to
        // run without one.
        ScriptEngine js = ScriptEngineUtil.createScriptEngine(PluginBuilder.SERVICE_TYPE);
        hello.put("jsEngine", js == null ? null : js.getFactory().getEngineName() + " " + js.getFactory().getEngineVersion());
        RangerOracle oracle = new RangerOracle();
        JsonLines.serve(hello, oracle::handle);
    }

    JsonNode handle(ObjectNode req) throws Exception {
        String op = Requests.requiredText(req, "op");
        switch (op) {
            case "load":
                return load(req);
            case "setPolicies":
                return setPolicies(req);
            case "access":
                return Answers.access(checked(plugin().isAccessAllowed(RequestBuilder.build(req, null), null), op));
            case "mask":
                return Answers.mask(checked(plugin().evalDataMaskPolicies(RequestBuilder.build(req, "select"), null), op));
            case "rowfilter":
                return Answers.rowFilter(checked(plugin().evalRowFilterPolicies(RequestBuilder.build(req, "select"), null), op));
            case "batch":
                return batch(req);
            case "accessinfo": {
                RangerAccessRequestImpl r = RequestBuilder.build(req, null);
                return Answers.accessInfo(plugin().getResourceAccessInfo(r));
            }
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    private ObjectNode batch(ObjectNode req) {
        JsonNode list = req.get("requests");
        if (list == null || !list.isArray()) {
            throw new IllegalArgumentException("batch needs a list of requests");
        }
        ObjectNode out = JsonLines.mapper().createObjectNode();
        ArrayNode results = out.putArray("results");
        for (JsonNode one : list) {
            if (!(one instanceof ObjectNode)) {
                throw new IllegalArgumentException("a batch holds request objects");
            }
            String op = Requests.text(one, "op");
            if ("load".equals(op) || "setPolicies".equals(op) || "batch".equals(op)) {
                throw new IllegalArgumentException("a batch holds evaluations only, not " + op);
            }
            // An evaluation that fails is that element's error, not the
            // batch's: the others still answer.
            try {
                results.add(handle((ObjectNode) one));
            } catch (Exception e) {
                results.add(JsonLines.mapper().createObjectNode().put("error", JsonLines.describe(e)));
            }
        }
        return out;
    }

    private ObjectNode load(ObjectNode req) throws Exception {
        PluginBuilder.Built built = PluginBuilder.build(req);
        if (plugin != null) {
            plugin.cleanup();
        }
        plugin = built.plugin;
        ObjectNode out = JsonLines.mapper().createObjectNode();
        out.put("loaded", true);
        out.put("policyVersion", plugin.getPoliciesVersion());
        out.put("tagEnricherAdded", built.tagEnricherAdded);
        out.put("tagEnricher", built.hasTagEnricher);
        out.put("userStoreEnricher", built.hasUserStoreEnricher);
        return out;
    }

    private ObjectNode setPolicies(ObjectNode req) throws Exception {
        ServicePolicies policies = Documents.servicePolicies(req.get("servicePolicies"));
        if (policies == null) {
            throw new IllegalArgumentException("setPolicies needs servicePolicies");
        }
        plugin().setPolicies(policies);
        ObjectNode out = JsonLines.mapper().createObjectNode();
        out.put("loaded", true);
        out.put("policyVersion", plugin.getPoliciesVersion());
        return out;
    }

    private RangerBasePlugin plugin() {
        if (plugin == null) {
            throw new IllegalStateException("no policies loaded: send a load request first");
        }
        return plugin;
    }

    private static RangerAccessResult checked(RangerAccessResult r, String op) {
        if (r == null) {
            throw new IllegalStateException(op + ": Ranger returned no result (no policy engine)");
        }
        return r;
    }

    /** The release of ranger-plugins-common on the class path. */
    static String rangerVersion() {
        try (InputStream in = RangerBasePlugin.class.getResourceAsStream(
                "/META-INF/maven/org.apache.ranger/ranger-plugins-common/pom.properties")) {
            if (in != null) {
                Properties p = new Properties();
                p.load(in);
                return p.getProperty("version");
            }
        } catch (Exception ignored) {
            // fall through to the manifest
        }
        return RangerBasePlugin.class.getPackage().getImplementationVersion();
    }
}
