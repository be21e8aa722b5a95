package policy

import (
	"errors"
	"fmt"

	"github.com/pgranger/pgranger/ranger"
)

// Ranger's class names for a tag enricher reading a ServiceTags document
// from a file (RangerTagEnricher with RangerFileBasedTagRetriever).
const (
	tagEnricherClass       = "org.apache.ranger.plugin.contextenricher.RangerTagEnricher"
	fileTagRetrieverClass  = "org.apache.ranger.plugin.contextenricher.RangerFileBasedTagRetriever"
	serviceTagsFileNameOpt = "serviceTagsFileName"
	// Ranger's default when the option is absent.
	defaultServiceTagsFileName = "/testdata/test_servicetags_hive.json"
)

// fileTagEnricher returns the ServiceTags file a service-def's context
// enrichers name through RangerTagEnricher with RangerFileBasedTagRetriever
// (the tag service-def's enrichers first, as Ranger's tag policy
// repository builds them), and whether any does.
func fileTagEnricher(defs ...*ranger.RangerServiceDef) (string, bool) {
	for _, sd := range defs {
		if sd == nil {
			continue
		}
		for _, ce := range sd.ContextEnrichers {
			if ce.Enricher != tagEnricherClass || ce.EnricherOptions["tagRetrieverClassName"] != fileTagRetrieverClass {
				continue
			}
			name := ce.EnricherOptions[serviceTagsFileNameOpt]
			if name == "" {
				name = defaultServiceTagsFileName
			}
			return name, true
		}
	}
	return "", false
}

// enricherTags loads the ServiceTags a file-based tag enricher names, when
// the bundle carries no tags of its own. A named file that cannot be read
// or parsed is an error: evaluating without the tags would skip the tag
// policies (deny ones included) the bundle's author meant to apply.
func enricherTags(b *ranger.Bundle, opts *Options) (*ranger.ServiceTags, error) {
	if b.Tags != nil {
		return b.Tags, nil
	}
	var tagDef *ranger.RangerServiceDef
	if tp := b.Policies.TagPolicies; tp != nil {
		tagDef = tp.ServiceDef
	}
	name, ok := fileTagEnricher(tagDef, b.Policies.ServiceDef)
	if !ok {
		return nil, nil
	}
	if opts.ReadTagFile == nil {
		return nil, fmt.Errorf("policy: the tag enricher reads ServiceTags from file %q, and no tag file reader is configured (supply the tags with the bundle)", name)
	}
	data, err := opts.ReadTagFile(name)
	if err != nil {
		return nil, fmt.Errorf("policy: tag enricher file %q: %w", name, err)
	}
	st, err := ranger.ParseServiceTags(data)
	if err != nil {
		return nil, fmt.Errorf("policy: tag enricher file %q: %w", name, err)
	}
	if st == nil {
		return nil, fmt.Errorf("policy: tag enricher file %q: %w", name, errors.New("empty document"))
	}
	return st, nil
}
