package org.pgranger.interop.ranger;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import org.apache.ranger.plugin.contextenricher.RangerTagForEval;
import org.apache.ranger.plugin.policyengine.RangerAccessRequest;
import org.apache.ranger.plugin.policyengine.RangerAccessRequestImpl;
import org.apache.ranger.plugin.policyengine.RangerAccessResourceImpl;
import org.apache.ranger.plugin.util.RangerAccessRequestUtil;
import org.apache.ranger.plugin.util.RangerRequestedResources;
import org.apache.ranger.plugin.util.RangerUserStore;
import org.pgranger.interop.common.Requests;

import java.util.Date;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * An access, mask or row-filter request as Ranger's RangerAccessRequestImpl.
 * Context entries are built the way Ranger's own policy-engine test runner
 * builds them from its test files (TAGS, REQUESTED_RESOURCES,
 * ALLACCESSTYPES, user attributes as a request user store), so the same case
 * means the same thing here and there.
 */
final class RequestBuilder {
    private static final TypeReference<LinkedHashSet<RangerTagForEval>> TAG_SET = new TypeReference<>() {
    };

    private RequestBuilder() {
    }

    static RangerAccessRequestImpl build(JsonNode req, String defaultAccessType) throws Exception {
        JsonNode res = req.get("resource");
        if (res == null || !res.isObject()) {
            throw new IllegalArgumentException("field resource must be an object of resource name to value(s)");
        }
        RangerAccessResourceImpl resource = new RangerAccessResourceImpl();
        for (Iterator<Map.Entry<String, JsonNode>> it = res.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            JsonNode v = e.getValue();
            if (v.isTextual()) {
                resource.setValue(e.getKey(), v.asText());
            } else if (v.isArray()) {
                resource.setValue(e.getKey(), Requests.strings(res, e.getKey()));
            } else if (!v.isNull()) {
                throw new IllegalArgumentException("resource " + e.getKey() + " must be a string or a list of strings");
            }
        }
        resource.setOwnerUser(Requests.text(req, "owner"));

        String accessType = Requests.text(req, "accessType");
        if (accessType == null) {
            accessType = defaultAccessType;
        }
        String user = Requests.requiredText(req, "user");
        List<String> groups = Requests.strings(req, "groups");
        List<String> roles = Requests.strings(req, "roles");
        RangerAccessRequestImpl r = new RangerAccessRequestImpl(resource, accessType, user,
                groups == null ? new HashSet<>() : new HashSet<>(groups),
                roles == null ? null : new HashSet<>(roles));

        Long at = Requests.integer(req, "accessTime");
        r.setAccessTime(at == null ? new Date() : new Date(at));
        r.setClientIPAddress(Requests.text(req, "clientIPAddress"));
        r.setRemoteIPAddress(Requests.text(req, "remoteIPAddress"));
        r.setForwardedAddresses(Requests.strings(req, "forwardedAddresses"));
        r.setAction(Requests.text(req, "action"));
        r.setRequestData(Requests.text(req, "requestData"));
        r.setClientType(Requests.text(req, "clientType"));
        r.setClusterName(Requests.text(req, "clusterName"));
        r.setClusterType(Requests.text(req, "clusterType"));

        String scope = Requests.text(req, "resourceMatchingScope");
        if (scope != null) {
            r.setResourceMatchingScope(RangerAccessRequest.ResourceMatchingScope.valueOf(scope));
        }
        Boolean ignoreDescendantDeny = Requests.bool(req, "isDescendantDenyIgnored");
        if (ignoreDescendantDeny != null) {
            r.setIgnoreDescendantDeny(ignoreDescendantDeny);
        }

        Map<String, Object> context = new HashMap<>();
        JsonNode ctx = req.get("context");
        if (ctx != null && !ctx.isNull()) {
            if (!ctx.isObject()) {
                throw new IllegalArgumentException("field context must be an object");
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = ctx.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                putContext(context, e.getKey(), e.getValue());
            }
        }
        // "tags": the resource's tags, as Ranger's TAGS context entry.
        JsonNode tags = req.get("tags");
        if (tags != null && !tags.isNull()) {
            putContext(context, RangerAccessRequestUtil.KEY_CONTEXT_TAGS, tags);
        }
        r.setContext(context);

        JsonNode userAttrs = req.get("userAttributes");
        JsonNode groupAttrs = req.get("groupAttributes");
        if (isNonEmptyObject(userAttrs) || isNonEmptyObject(groupAttrs)) {
            RangerUserStore store = new RangerUserStore();
            store.setUserAttrMapping(attrMapping(userAttrs));
            store.setGroupAttrMapping(attrMapping(groupAttrs));
            RangerAccessRequestUtil.setRequestUserStoreInContext(r.getContext(), store);
        }
        return r;
    }

    private static void putContext(Map<String, Object> context, String key, JsonNode v) throws Exception {
        switch (key) {
            case RangerAccessRequestUtil.KEY_CONTEXT_TAGS: {
                // The test files carry tags as a JSON string; callers may also
                // send the list itself.
                JsonNode list = v.isTextual() ? (v.asText().isBlank() ? null : Documents.mapper().readTree(v.asText())) : v;
                if (list != null) {
                    Set<RangerTagForEval> set = Documents.mapper().convertValue(list, TAG_SET);
                    context.put(key, set);
                }
                return;
            }
            case RangerAccessRequestUtil.KEY_CONTEXT_REQUESTED_RESOURCES: {
                JsonNode doc = v.isTextual() ? (v.asText().isBlank() ? null : Documents.mapper().readTree(v.asText())) : v;
                if (doc != null) {
                    context.put(key, requestedResources(doc));
                }
                return;
            }
            case RangerAccessRequestUtil.KEY_CONTEXT_ALL_ACCESSTYPES: {
                context.put(key, new TreeSet<>(Documents.mapper().convertValue(v, new TypeReference<List<String>>() {
                })));
                return;
            }
            case RangerAccessRequestUtil.KEY_CONTEXT_ALL_ACCESSTYPE_GROUPS: {
                Set<Set<String>> groups = new HashSet<>();
                for (List<String> g : Documents.mapper().convertValue(v, new TypeReference<List<List<String>>>() {
                })) {
                    groups.add(new TreeSet<>(g));
                }
                context.put(key, groups);
                return;
            }
            default:
                context.put(key, Documents.mapper().convertValue(v, Object.class));
        }
    }

    /** {"requestedResources":[{"elements":{…}}, …]} */
    private static RangerRequestedResources requestedResources(JsonNode doc) {
        RangerRequestedResources out = new RangerRequestedResources();
        JsonNode list = doc.get("requestedResources");
        if (list == null || !list.isArray()) {
            throw new IllegalArgumentException("REQUESTED_RESOURCES must hold a requestedResources list");
        }
        for (JsonNode r : list) {
            Map<String, Object> elements = Documents.mapper().convertValue(r.get("elements"), new TypeReference<Map<String, Object>>() {
            });
            out.addRequestedResource(new RangerAccessResourceImpl(elements));
        }
        return out;
    }

    private static boolean isNonEmptyObject(JsonNode n) {
        return n != null && n.isObject() && n.size() > 0;
    }

    private static Map<String, Map<String, String>> attrMapping(JsonNode n) {
        if (n == null || n.isNull()) {
            return null;
        }
        return Documents.mapper().convertValue(n, new TypeReference<Map<String, Map<String, String>>>() {
        });
    }
}
