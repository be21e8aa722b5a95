package org.apache.ranger.plugin.conditionevaluator;

import org.apache.commons.io.FilenameUtils;
import org.apache.ranger.plugin.policyengine.RangerAccessRequest;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The condition evaluator Ranger's own policy-engine test files name
 * (serviceDef.policyConditions[].evaluator) for their "country"-style
 * conditions. It lives in Ranger's test sources, not in
 * ranger-plugins-common, so Ranger's test runner has it on its class path
 * and a plugin built from the released jars does not: without it Ranger
 * logs an error and drops the condition, and the files' conditional
 * grants allow everything. This class gives the oracle the class path
 * Ranger's runner has, so its answers are the ones the files were written
 * against.
 *
 * Written for pgranger from the evaluator's documented behaviour: the
 * evaluator option CONTEXT_NAME names a request-context entry; the
 * condition matches when that entry is a non-blank string matching one of
 * the condition's values as a file-name wildcard ('*', '?'), and always
 * when the condition has no values or the option is absent.
 */
public class RangerSimpleMatcher extends RangerAbstractConditionEvaluator {
    public static final String CONTEXT_NAME = "CONTEXT_NAME";

    private boolean matchesAll;
    private String contextName;
    private final List<String> values = new ArrayList<>();

    @Override
    public void init() {
        super.init();
        Map<String, String> options = conditionDef == null ? null : conditionDef.getEvaluatorOptions();
        String name = options == null ? null : options.get(CONTEXT_NAME);
        if (condition == null || condition.getValues() == null || condition.getValues().isEmpty()
                || name == null || name.isEmpty()) {
            matchesAll = true;
            return;
        }
        contextName = name;
        values.addAll(condition.getValues());
    }

    @Override
    public boolean isMatched(RangerAccessRequest request) {
        if (matchesAll) {
            return true;
        }
        Object v = request == null || request.getContext() == null ? null : request.getContext().get(contextName);
        if (!(v instanceof String) || ((String) v).isBlank()) {
            return false;
        }
        for (String want : values) {
            if (FilenameUtils.wildcardMatch((String) v, want)) {
                return true;
            }
        }
        return false;
    }
}
