package org.pgranger.interop.spark;

import org.apache.ranger.plugin.model.RangerServiceDef;
import org.apache.ranger.plugin.policyengine.RangerAccessRequestImpl;
import org.apache.ranger.plugin.policyengine.RangerAccessResourceImpl;
import org.apache.ranger.plugin.policyengine.RangerAccessResult;
import org.apache.ranger.plugin.policyengine.RangerPolicyEngine;
import org.apache.ranger.plugin.service.RangerBasePlugin;
import org.apache.ranger.authorization.hadoop.config.RangerPluginConfig;

import java.io.File;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Collections;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Ranger's plugin as Kyuubi's Spark AuthZ extension runs it: service type
 * "spark", app id "sparkSql", the hive service's policies, tags, roles and
 * user store downloaded from a Ranger Admin by RangerAdminRESTClient and
 * refreshed in the background. Requests are Hive's: database = the JDBC
 * namespace, table, column; access type select.
 */
final class RangerAuthz {
    static final String SERVICE_TYPE = "spark";
    static final String APP_ID = "sparkSql";

    /** The plugin, with its engine visible for the load check. */
    static final class Plugin extends RangerBasePlugin {
        Plugin(RangerPluginConfig config) {
            super(config);
        }

        RangerPolicyEngine engine() {
            return getPolicyEngine();
        }
    }

    final Plugin plugin;

    private RangerAuthz(Plugin plugin) {
        this.plugin = plugin;
    }

    /** Starts the plugin and waits until it holds policies (or fails). */
    static RangerAuthz start(String url, String service, String cacheDir, long waitMillis) throws Exception {
        Map<String, String> conf = new LinkedHashMap<>();
        String p = "ranger.plugin." + SERVICE_TYPE;
        conf.put("xasecure.audit.is.enabled", "false");
        conf.put(p + ".service.name", service);
        conf.put(p + ".policy.source.impl", "org.apache.ranger.admin.client.RangerAdminRESTClient");
        conf.put(p + ".policy.rest.url", url);
        conf.put(p + ".policy.cache.dir", cacheDir);
        // Kyuubi reuses the hive service-def: its tag and user-store
        // retrievers cache under the hive prefix.
        conf.put("ranger.plugin.hive.policy.cache.dir", cacheDir);
        conf.put(p + ".policy.pollIntervalMs", "1000");
        conf.put(p + ".policy.rest.client.connection.timeoutMs", "5000");
        conf.put(p + ".policy.rest.client.read.timeoutMs", "5000");
        conf.put(p + ".enable.implicit.userstore.enricher", "true");
        File site = File.createTempFile("ranger-spark-site", ".xml");
        try {
            try (Writer w = Files.newBufferedWriter(site.toPath(), StandardCharsets.UTF_8)) {
                w.write("<?xml version=\"1.0\"?>\n<configuration>\n");
                for (Map.Entry<String, String> e : conf.entrySet()) {
                    w.write("  <property><name>" + xml(e.getKey()) + "</name><value>" + xml(e.getValue()) + "</value></property>\n");
                }
                w.write("</configuration>\n");
            }
            RangerPluginConfig config = new RangerPluginConfig(SERVICE_TYPE, service, APP_ID, null, null,
                    Collections.singletonList(site), null);
            Plugin plugin = new Plugin(config);
            plugin.init();
            long deadline = System.currentTimeMillis() + waitMillis;
            while (plugin.engine() == null || plugin.getServiceDef() == null) {
                if (System.currentTimeMillis() > deadline) {
                    plugin.cleanup();
                    throw new IllegalStateException("Ranger's plugin loaded no policies from " + url + " within " + waitMillis + " ms (see the oracle's stderr)");
                }
                Thread.sleep(100);
            }
            return new RangerAuthz(plugin);
        } finally {
            Files.deleteIfExists(site.toPath());
        }
    }

    /** Versions the plugin holds, for the caller to wait on refreshes. */
    Map<String, Object> versions() {
        Map<String, Object> out = new LinkedHashMap<>();
        RangerPolicyEngine e = plugin.engine();
        out.put("policyVersion", e == null ? null : e.getPolicyVersion());
        out.put("tagEnricher", plugin.getTagEnricher() != null);
        out.put("userStoreEnricher", plugin.getUserStoreEnricher() != null);
        return out;
    }

    private RangerAccessRequestImpl request(String db, String table, String column, String user, Set<String> groups) {
        RangerAccessResourceImpl res = new RangerAccessResourceImpl();
        res.setValue("database", db);
        res.setValue("table", table);
        if (column != null) {
            res.setValue("column", column);
        }
        RangerAccessRequestImpl req = new RangerAccessRequestImpl(res, "select", user, groups, null);
        req.setAccessTime(new Date());
        req.setAction("QUERY");
        req.setClusterName("");
        return req;
    }

    /** Whether user may select the column (null: the table as a whole). */
    boolean allowed(String db, String table, String column, String user, Set<String> groups) {
        RangerAccessResult r = plugin.isAccessAllowed(request(db, table, column, user, groups), null);
        return r != null && r.getIsAllowed();
    }

    /** The row filter on the table for user, or null. */
    String rowFilter(String db, String table, String user, Set<String> groups) {
        RangerAccessResult r = plugin.evalRowFilterPolicies(request(db, table, null, user, groups), null);
        if (r == null || !r.isRowFilterEnabled() || r.getFilterExpr() == null || r.getFilterExpr().isEmpty()) {
            return null;
        }
        return r.getFilterExpr();
    }

    /**
     * The Spark expression replacing the column for user, or null
     * (unmasked), decided as Kyuubi's getMaskingExpr decides: MASK_NULL and
     * CUSTOM by the result's mask type, the others by the name of its mask
     * type definition, and any other definition by its transformer.
     */
    String mask(String db, String table, String column, String user, Set<String> groups) {
        RangerAccessResult r = plugin.evalDataMaskPolicies(request(db, table, column, user, groups), null);
        if (r == null || !r.isMaskEnabled()) {
            return null;
        }
        String col = "`" + column + "`";
        if ("MASK_NULL".equalsIgnoreCase(r.getMaskType())) {
            return "NULL";
        }
        if ("CUSTOM".equalsIgnoreCase(r.getMaskType())) {
            return Masks.expression("CUSTOM", col, r.getMaskedValue());
        }
        RangerServiceDef.RangerDataMaskTypeDef def = r.getMaskTypeDef();
        if (def == null) {
            return null;
        }
        switch (def.getName()) {
            case "MASK":
            case "MASK_SHOW_FIRST_4":
            case "MASK_SHOW_LAST_4":
            case "MASK_HASH":
            case "MASK_DATE_SHOW_YEAR":
                return Masks.expression(def.getName(), col, null);
            default:
                String tr = def.getTransformer();
                return tr == null || tr.isEmpty() ? null : tr.replace("{col}", col);
        }
    }

    static String xml(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
