package policy

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pgranger/pgranger/ranger"
)

// view indexes: a policy's type selects which resource defs its resources
// are matched with (Ranger's RangerServiceDefHelper.getResourceDefs).
const (
	viewAccess = iota
	viewMask
	viewRowFilter
	numViews
)

type matcherKind int

const (
	matcherDefault matcherKind = iota
	matcherPath                // RangerPathResourceMatcher
	matcherURL                 // RangerURLResourceMatcher
)

type matchOpts struct {
	ignoreCase    bool
	wildCard      bool
	replaceTokens bool
	tokStart      rune
	tokEnd        rune
	tokEscape     rune
	tokPrefix     string
	replaceExpr   bool
	pathSep       rune
	kind          matcherKind
}

type resDef struct {
	name      string
	idx       int // position in serviceDef.names, i.e. in a request's value vector
	level     int
	parent    string
	validLeaf *bool
	opts      matchOpts
}

type hierarchy struct {
	defs []*resDef
	mask uint64 // bit i set when names[i] is in the hierarchy
}

type resView struct {
	byIdx       map[int]*resDef
	hierarchies []hierarchy // shortest first, so the first fit is Ranger's "shortest hierarchy"
}

// serviceDef is a RangerServiceDef prepared for evaluation. Access type names
// are lower-cased because Ranger compares them with equalsIgnoreCase.
type serviceDef struct {
	name        string
	names       []string
	nameIdx     map[string]int
	views       [numViews]*resView
	accessTypes []string            // the set `_any` expands to, in Java HashSet order (javaorder.go)
	implied     map[string][]string // one level, as Ranger expands it
	maskTypes   map[string]*ranger.RangerDataMaskTypeDef
	maskFolded  map[string]*ranger.RangerDataMaskTypeDef // by lower-cased name, first definition wins
	condDefs    map[string]*ranger.RangerPolicyConditionDef
	denyEnabled bool // option enableDenyAndExceptionsInPolicies
}

// viewFor returns the resource defs policies of ptype match with. A tag
// service-def written by hand may lack dataMaskDef/rowFilterDef; with
// fallback its single "tag" resource is used for them too.
func (sd *serviceDef) viewFor(ptype int, fallback bool) *resView {
	v := viewAccess
	switch ptype {
	case ranger.PolicyTypeDataMask:
		v = viewMask
	case ranger.PolicyTypeRowFilter:
		v = viewRowFilter
	}
	if sd.views[v] == nil && fallback {
		return sd.views[viewAccess]
	}
	return sd.views[v]
}

func (sd *serviceDef) idxOf(name string) int {
	if i, ok := sd.nameIdx[name]; ok {
		return i
	}
	return -1
}

// compileServiceDef prepares def. componentPrefix, when not empty, is the
// "hive:" prefix that tag service-defs put on access types; it is stripped
// and other components' access types are dropped, as
// RangerServiceDef.normalizeAccessTypeDefs does.
func compileServiceDef(def *ranger.RangerServiceDef, componentPrefix string) (*serviceDef, error) {
	if def == nil {
		return nil, fmt.Errorf("no service-def")
	}
	if len(def.Resources) > 64 {
		return nil, fmt.Errorf("service-def %q has %d resources; at most 64 are supported", def.Name, len(def.Resources))
	}
	sd := &serviceDef{
		name:        def.Name,
		nameIdx:     make(map[string]int, len(def.Resources)),
		implied:     map[string][]string{},
		maskTypes:   map[string]*ranger.RangerDataMaskTypeDef{},
		maskFolded:  map[string]*ranger.RangerDataMaskTypeDef{},
		condDefs:    map[string]*ranger.RangerPolicyConditionDef{},
		denyEnabled: !strings.EqualFold(strings.TrimSpace(def.Options["enableDenyAndExceptionsInPolicies"]), "false"),
	}
	isHive := def.Name == "hive"
	base := make([]ranger.RangerResourceDef, 0, len(def.Resources))
	for _, rd := range def.Resources {
		if rd.Name == "" {
			continue
		}
		if _, dup := sd.nameIdx[rd.Name]; dup {
			return nil, fmt.Errorf("service-def %q declares resource %q twice", def.Name, rd.Name)
		}
		if len(rd.MatcherOptions) == 0 && isHive {
			if stock := stockHiveResource(rd.Name); stock != nil {
				rd.MatcherOptions = stock.MatcherOptions
			}
		}
		sd.nameIdx[rd.Name] = len(sd.names)
		sd.names = append(sd.names, rd.Name)
		base = append(base, rd)
	}
	sd.views[viewAccess] = buildView(sd, base)

	// Mask and row-filter resources are deltas merged over the base
	// resource (RangerServiceDef.normalizeDataMaskDef): only what the delta
	// sets changes, so ignoreCase stays while wildCard is turned off.
	mergeView := func(deltas []ranger.RangerResourceDef) *resView {
		if len(deltas) == 0 {
			return nil
		}
		var merged []ranger.RangerResourceDef
		for _, d := range deltas {
			i := sd.idxOf(d.Name)
			if i < 0 {
				continue
			}
			m := base[i]
			opts := ranger.StringMap{}
			for k, v := range m.MatcherOptions {
				opts[k] = v
			}
			delta := d.MatcherOptions
			if len(delta) == 0 && isHive {
				delta = ranger.StringMap{"wildCard": "false"}
			}
			for k, v := range delta {
				opts[k] = v
			}
			m.MatcherOptions = opts
			if d.Matcher != "" {
				m.Matcher = d.Matcher
			}
			if d.IsValidLeaf != nil {
				m.IsValidLeaf = d.IsValidLeaf
			}
			merged = append(merged, m)
		}
		return buildView(sd, merged)
	}
	if def.DataMaskDef != nil {
		sd.views[viewMask] = mergeView(def.DataMaskDef.Resources)
		for i := range def.DataMaskDef.MaskTypes {
			mt := &def.DataMaskDef.MaskTypes[i]
			if _, ok := sd.maskTypes[mt.Name]; !ok {
				sd.maskTypes[mt.Name] = mt
			}
			if _, ok := sd.maskFolded[strings.ToLower(mt.Name)]; !ok {
				sd.maskFolded[strings.ToLower(mt.Name)] = mt
			}
		}
	}
	if def.RowFilterDef != nil {
		sd.views[viewRowFilter] = mergeView(def.RowFilterDef.Resources)
	}

	addAccess := func(list []ranger.RangerAccessTypeDef, isMarker bool) {
		for _, at := range list {
			name, ok := normalizeAccessName(at.Name, componentPrefix)
			if !ok {
				continue
			}
			if !isMarker {
				sd.accessTypes = append(sd.accessTypes, name)
			}
			for _, g := range at.ImpliedGrants {
				if gn, ok := normalizeAccessName(g, componentPrefix); ok {
					sd.implied[name] = append(sd.implied[name], gn)
				}
			}
		}
	}
	addAccess(def.AccessTypes, false)
	addAccess(def.MarkerAccessTypes, true)
	// `_any` walks the access types in the order Ranger's HashSet of them
	// iterates (javaorder.go): the walk decides which policy is reported.
	sd.accessTypes = javaHashSetOrder(sd.accessTypes)

	for i := range def.PolicyConditions {
		cd := &def.PolicyConditions[i]
		if _, ok := sd.condDefs[cd.Name]; !ok {
			sd.condDefs[cd.Name] = cd
		}
	}
	return sd, nil
}

// recursiveSupported is EmbeddedServiceDefsUtil.isRecursiveEnabled: zone
// resources are recursive where the resource supports it.
func recursiveSupportedIn(def *ranger.RangerServiceDef, name string) bool {
	for _, r := range def.Resources {
		if r.Name == name {
			return r.RecursiveSupported
		}
	}
	return false
}

// normalizeAccessName lower-cases an access type and handles component
// prefixes: with prefix "hive:", "hive:select" becomes "select" and
// "hbase:read" is dropped (ok=false).
func normalizeAccessName(name, componentPrefix string) (string, bool) {
	if componentPrefix != "" {
		if strings.HasPrefix(name, componentPrefix) {
			name = name[len(componentPrefix):]
		} else if strings.Contains(name, ":") {
			return "", false
		}
	}
	return strings.ToLower(name), name != ""
}

func buildView(sd *serviceDef, defs []ranger.RangerResourceDef) *resView {
	v := &resView{byIdx: make(map[int]*resDef, len(defs))}
	byName := make(map[string]*resDef, len(defs))
	var order []*resDef
	for _, d := range defs {
		i := sd.idxOf(d.Name)
		if i < 0 {
			continue
		}
		rd := &resDef{name: d.Name, idx: i, level: d.Level, parent: d.Parent, validLeaf: d.IsValidLeaf, opts: parseMatchOpts(d)}
		v.byIdx[i] = rd
		byName[d.Name] = rd
		order = append(order, rd)
	}

	children := map[string][]*resDef{}
	for _, rd := range order {
		if rd.parent != "" && byName[rd.parent] != nil {
			children[rd.parent] = append(children[rd.parent], rd)
		}
	}
	var paths [][]*resDef
	var walk func(path []*resDef)
	walk = func(path []*resDef) {
		last := path[len(path)-1]
		kids := children[last.name]
		if len(kids) == 0 {
			paths = append(paths, append([]*resDef(nil), path...))
			return
		}
		// Intermediate nodes marked isValidLeaf are hierarchies of their
		// own (RangerServiceDefHelper.getHierarchies).
		if len(path) > 0 && last.validLeaf != nil && *last.validLeaf {
			paths = append(paths, append([]*resDef(nil), path...))
		}
		for _, k := range kids {
			if containsDef(path, k) { // a cycle: Ranger rejects the graph
				continue
			}
			walk(append(path, k))
		}
	}
	for _, rd := range order {
		if rd.parent == "" || byName[rd.parent] == nil {
			walk([]*resDef{rd})
		}
	}
	seen := map[uint64]bool{}
	for _, p := range paths {
		h := hierarchy{defs: p}
		for _, rd := range p {
			h.mask |= 1 << uint(rd.idx)
		}
		if seen[h.mask] {
			continue
		}
		seen[h.mask] = true
		v.hierarchies = append(v.hierarchies, h)
	}
	sort.SliceStable(v.hierarchies, func(a, b int) bool {
		return len(v.hierarchies[a].defs) < len(v.hierarchies[b].defs)
	})
	return v
}

func containsDef(path []*resDef, d *resDef) bool {
	for _, p := range path {
		if p == d {
			return true
		}
	}
	return false
}

func parseMatchOpts(d ranger.RangerResourceDef) matchOpts {
	o := d.MatcherOptions
	b := func(key string, def bool) bool {
		v, ok := o[key]
		if !ok {
			return def
		}
		return strings.EqualFold(strings.TrimSpace(v), "true") // Boolean.parseBoolean
	}
	r := func(key string, def rune) rune {
		v := o[key]
		if v == "" {
			return def
		}
		return []rune(v)[0]
	}
	m := matchOpts{
		ignoreCase:    b("ignoreCase", true),
		wildCard:      b("wildCard", true),
		replaceTokens: b("replaceTokens", true),
		tokStart:      r("tokenDelimiterStart", '{'),
		tokEnd:        r("tokenDelimiterEnd", '}'),
		tokEscape:     r("tokenDelimiterEscape", '\\'),
		tokPrefix:     o["tokenDelimiterPrefix"],
		replaceExpr:   b("replaceReqExpressions", true),
		pathSep:       r("pathSeparatorChar", '/'),
	}
	if m.replaceTokens && (m.tokEscape == m.tokStart || m.tokEscape == m.tokEnd ||
		strings.ContainsRune(m.tokPrefix, m.tokEscape) || strings.ContainsRune(m.tokPrefix, m.tokStart) || strings.ContainsRune(m.tokPrefix, m.tokEnd)) {
		m.replaceTokens = false // Ranger disables replacement for contradictory delimiters
	}
	switch {
	case strings.HasSuffix(d.Matcher, "RangerPathResourceMatcher"):
		m.kind = matcherPath
	case strings.HasSuffix(d.Matcher, "RangerURLResourceMatcher"):
		m.kind = matcherURL
	}
	return m
}
