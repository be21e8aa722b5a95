package org.pgranger.interop.ranger;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.ranger.plugin.util.RangerRoles;
import org.apache.ranger.plugin.util.RangerUserStore;
import org.apache.ranger.plugin.util.ServicePolicies;
import org.apache.ranger.plugin.util.ServiceTags;

import java.text.SimpleDateFormat;

/**
 * Ranger's JSON documents into Ranger's own model classes. The mapper is set
 * up as Ranger's JsonUtils sets up its own (plugin cache date format, single
 * quotes allowed, unknown fields ignored), but unlike JsonUtils.jsonToObject
 * it throws on malformed input instead of logging and returning null: a
 * document the oracle cannot read must fail the load, not load as empty.
 */
final class Documents {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    static {
        MAPPER.setDateFormat(new SimpleDateFormat("yyyyMMdd-HH:mm:ss.SSS-Z"));
        MAPPER.configure(JsonParser.Feature.ALLOW_SINGLE_QUOTES, true);
        MAPPER.configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    }

    private Documents() {
    }

    static ObjectMapper mapper() {
        return MAPPER;
    }

    static ServicePolicies servicePolicies(JsonNode n) throws Exception {
        return read(n, ServicePolicies.class, "servicePolicies");
    }

    static ServiceTags serviceTags(JsonNode n) throws Exception {
        return read(n, ServiceTags.class, "serviceTags");
    }

    static RangerRoles roles(JsonNode n) throws Exception {
        return read(n, RangerRoles.class, "roles");
    }

    static RangerUserStore userStore(JsonNode n) throws Exception {
        return read(n, RangerUserStore.class, "userStore");
    }

    private static <T> T read(JsonNode n, Class<T> cls, String what) throws Exception {
        if (n == null || n.isNull()) {
            return null;
        }
        if (!n.isObject()) {
            throw new IllegalArgumentException(what + " must be a JSON object");
        }
        try {
            return MAPPER.treeToValue(n, cls);
        } catch (Exception e) {
            throw new IllegalArgumentException(what + ": " + e.getMessage(), e);
        }
    }
}
