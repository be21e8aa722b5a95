package org.pgranger.interop.ranger;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.ranger.plugin.model.RangerServiceDef;
import org.apache.ranger.plugin.policyengine.RangerAccessResult;
import org.apache.ranger.plugin.policyengine.RangerResourceAccessInfo;
import org.pgranger.interop.common.JsonLines;

import java.util.Set;
import java.util.TreeSet;

/** Ranger's results as protocol lines: every field the callers compare. */
final class Answers {
    private Answers() {
    }

    static ObjectNode access(RangerAccessResult r) {
        ObjectNode out = base(r);
        out.put("allowed", r.getIsAllowed());
        out.put("determined", r.getIsAccessDetermined());
        out.put("audited", r.getIsAudited());
        out.put("reason", r.getReason());
        return out;
    }

    static ObjectNode mask(RangerAccessResult r) {
        ObjectNode out = base(r);
        out.put("maskEnabled", r.isMaskEnabled());
        out.put("maskType", r.getMaskType());
        out.put("maskedValue", r.getMaskedValue());
        out.put("maskCondition", r.getMaskCondition());
        RangerServiceDef.RangerDataMaskTypeDef def = r.getMaskTypeDef();
        out.put("transformer", def == null ? null : def.getTransformer());
        out.put("audited", r.getIsAudited());
        return out;
    }

    static ObjectNode rowFilter(RangerAccessResult r) {
        ObjectNode out = base(r);
        out.put("filterEnabled", r.isRowFilterEnabled());
        out.put("filterExpr", r.getFilterExpr());
        out.put("audited", r.getIsAudited());
        return out;
    }

    static ObjectNode accessInfo(RangerResourceAccessInfo info) {
        ObjectNode out = JsonLines.mapper().createObjectNode();
        out.set("allowedUsers", sorted(info.getAllowedUsers()));
        out.set("allowedGroups", sorted(info.getAllowedGroups()));
        out.set("deniedUsers", sorted(info.getDeniedUsers()));
        out.set("deniedGroups", sorted(info.getDeniedGroups()));
        return out;
    }

    private static ObjectNode base(RangerAccessResult r) {
        ObjectNode out = JsonLines.mapper().createObjectNode();
        out.put("policyId", r.getPolicyId());
        out.put("policyPriority", r.getPolicyPriority());
        return out;
    }

    private static ArrayNode sorted(Set<String> s) {
        ArrayNode a = JsonLines.mapper().createArrayNode();
        if (s != null) {
            for (String v : new TreeSet<>(s)) {
                a.add(v);
            }
        }
        return a;
    }
}
