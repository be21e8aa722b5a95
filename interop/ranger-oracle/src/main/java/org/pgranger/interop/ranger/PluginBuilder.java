package org.pgranger.interop.ranger;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.ranger.authorization.hadoop.config.RangerPluginConfig;
import org.apache.ranger.plugin.contextenricher.RangerTagEnricher;
import org.apache.ranger.plugin.model.RangerServiceDef;
import org.apache.ranger.plugin.policyengine.RangerPolicyEngineOptions;
import org.apache.ranger.plugin.service.RangerBasePlugin;
import org.apache.ranger.plugin.util.RangerRoles;
import org.apache.ranger.plugin.util.RangerUserStore;
import org.apache.ranger.plugin.util.ServicePolicies;
import org.apache.ranger.plugin.util.ServiceTags;

import java.io.File;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds a RangerBasePlugin for service type hive from one "load" message:
 * the documents pgranger reads, handed to the plugin's five-argument
 * constructor, with every background retriever off (nothing is downloaded,
 * nothing refreshes behind the caller's back) and audit off.
 */
final class PluginBuilder {
    static final String SERVICE_TYPE = "hive";
    static final String APP_ID = "pgranger-oracle";
    static final String PREFIX = "ranger.plugin." + SERVICE_TYPE;

    /** A built plugin and what the builder did on the documents' behalf. */
    static final class Built {
        final RangerBasePlugin plugin;
        final boolean tagEnricherAdded;
        final boolean hasTagEnricher;
        final boolean hasUserStoreEnricher;

        Built(RangerBasePlugin plugin, boolean tagEnricherAdded, boolean hasTagEnricher, boolean hasUserStoreEnricher) {
            this.plugin = plugin;
            this.tagEnricherAdded = tagEnricherAdded;
            this.hasTagEnricher = hasTagEnricher;
            this.hasUserStoreEnricher = hasUserStoreEnricher;
        }
    }

    private PluginBuilder() {
    }

    static Built build(JsonNode req) throws Exception {
        ServicePolicies policies = Documents.servicePolicies(req.get("servicePolicies"));
        if (policies == null) {
            throw new IllegalArgumentException("load needs servicePolicies");
        }
        if (policies.getServiceDef() == null) {
            throw new IllegalArgumentException("servicePolicies has no serviceDef");
        }
        ServiceTags tags = Documents.serviceTags(req.get("serviceTags"));
        RangerRoles roles = Documents.roles(req.get("roles"));
        RangerUserStore userStore = Documents.userStore(req.get("userStore"));

        // Ranger Admin serves a tag service-def that carries RangerTagEnricher;
        // a hand-made bundle often does not, and the plugin then ignores the
        // tags it is given. Add the enricher (without a retriever) so the
        // ServiceTags document applies, and say so in the answer.
        boolean added = false;
        if (tags != null && policies.getTagPolicies() != null && policies.getTagPolicies().getServiceDef() != null
                && !hasEnricher(policies.getTagPolicies().getServiceDef(), RangerTagEnricher.class.getName())) {
            RangerServiceDef tagDef = policies.getTagPolicies().getServiceDef();
            List<RangerServiceDef.RangerContextEnricherDef> enrichers = tagDef.getContextEnrichers() == null
                    ? new ArrayList<>() : new ArrayList<>(tagDef.getContextEnrichers());
            enrichers.add(new RangerServiceDef.RangerContextEnricherDef(1L, "TagEnricher", RangerTagEnricher.class.getName(), Collections.emptyMap()));
            tagDef.setContextEnrichers(enrichers);
            added = true;
        }

        // The engine options come from the configuration, as in a deployed
        // plugin (RangerPolicyEngineOptions.configureForPlugin), with the
        // three background retrievers off: nothing is downloaded and
        // nothing refreshes behind the caller's back.
        Map<String, String> config = new LinkedHashMap<>();
        config.put("xasecure.audit.is.enabled", "false");
        config.put(PREFIX + ".policyengine.option.disable.policy.refresher", "true");
        config.put(PREFIX + ".policyengine.option.disable.tag.retriever", "true");
        config.put(PREFIX + ".policyengine.option.disable.userstore.retriever", "true");
        // A user store only reaches ${{USER.x}} through a user-store enricher;
        // the plugin adds one where policies use such expressions only with
        // this option on.
        if (userStore != null) {
            config.put(PREFIX + ".enable.implicit.userstore.enricher", "true");
        }
        JsonNode extra = req.get("config");
        if (extra != null && !extra.isNull()) {
            if (!extra.isObject()) {
                throw new IllegalArgumentException("config must be an object of strings");
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = extra.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                if (!e.getValue().isTextual()) {
                    throw new IllegalArgumentException("config " + e.getKey() + " must be a string");
                }
                config.put(e.getKey(), e.getValue().asText());
            }
        }

        String serviceName = policies.getServiceName() == null || policies.getServiceName().isEmpty() ? "hive" : policies.getServiceName();
        // Properties such as use.x-forwarded-for.ipaddress are read while the
        // configuration is constructed, so they go in as a file, not set()
        // afterwards.
        File site = writeSite(config);
        try {
            RangerPluginConfig pluginConfig = new RangerPluginConfig(SERVICE_TYPE, serviceName, APP_ID, null, null,
                    Collections.singletonList(site), null);
            RangerPolicyEngineOptions options = pluginConfig.getPolicyEngineOptions();
            if (!options.disablePolicyRefresher || !options.disableTagRetriever || !options.disableUserStoreRetriever) {
                throw new IllegalStateException("config turned a background retriever back on: " + options);
            }
            RangerBasePlugin plugin = new RangerBasePlugin(pluginConfig, policies, tags, roles, userStore);
            // setPolicies logs and keeps no engine when the documents cannot
            // be compiled; an oracle without an engine would answer "denied"
            // to everything, so that is an error here.
            if (plugin.getServiceDef() == null) {
                plugin.cleanup();
                throw new IllegalStateException("Ranger built no policy engine from these documents (see the oracle's stderr)");
            }
            return new Built(plugin, added, plugin.getTagEnricher() != null, plugin.getUserStoreEnricher() != null);
        } finally {
            Files.deleteIfExists(site.toPath());
        }
    }

    private static boolean hasEnricher(RangerServiceDef def, String className) {
        if (def.getContextEnrichers() == null) {
            return false;
        }
        for (RangerServiceDef.RangerContextEnricherDef e : def.getContextEnrichers()) {
            if (className.equals(e.getEnricher())) {
                return true;
            }
        }
        return false;
    }

    private static File writeSite(Map<String, String> config) throws Exception {
        File f = File.createTempFile("ranger-oracle-site", ".xml");
        try (Writer w = Files.newBufferedWriter(f.toPath(), StandardCharsets.UTF_8)) {
            w.write("<?xml version=\"1.0\"?>\n<configuration>\n");
            for (Map.Entry<String, String> e : config.entrySet()) {
                w.write("  <property><name>" + xml(e.getKey()) + "</name><value>" + xml(e.getValue()) + "</value></property>\n");
            }
            w.write("</configuration>\n");
        }
        return f;
    }

    private static String xml(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
