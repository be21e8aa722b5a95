package diffgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/pgranger/pgranger/internal/interop"
	"github.com/pgranger/pgranger/ranger"
)

// Regression is a shrunk case, stored as JSON under testdata/regressions:
// a bundle, one request, and Ranger's answer to it, which pgranger's
// engine must give (TestRegressions replays them without the oracle).
type Regression struct {
	Name    string  `json:"name"`
	Why     string  `json:"why"`
	Bundle  Doc     `json:"bundle"`
	Request Request `json:"request"`
	Ranger  Answer  `json:"ranger"`
}

// Doc is a bundle as the four documents pgranger reads. A stored
// regression leaves out the service-defs when they are the generator's
// (HiveServiceDef, TagServiceDef); Bundle puts them back.
type Doc struct {
	Policies  *ranger.ServicePolicies `json:"servicePolicies"`
	Tags      *ranger.ServiceTags     `json:"serviceTags,omitempty"`
	Roles     *ranger.RangerRoles     `json:"roles,omitempty"`
	UserStore *ranger.RangerUserStore `json:"userStore,omitempty"`
}

// DocOf and (Doc).Bundle convert between a bundle and its documents.
func DocOf(b *ranger.Bundle) Doc {
	return Doc{Policies: b.Policies, Tags: b.Tags, Roles: b.Roles, UserStore: b.UserStore}
}

// Bundle parses the documents as pgranger's loaders do (a JSON round
// trip through the ranger package's parsers, so defaults apply).
func (d Doc) Bundle() (*ranger.Bundle, error) {
	b := &ranger.Bundle{}
	sp := *d.Policies
	if sp.ServiceDef == nil {
		sp.ServiceDef = HiveServiceDef()
	}
	if sp.TagPolicies != nil && sp.TagPolicies.ServiceDef == nil {
		tp := *sp.TagPolicies
		tp.ServiceDef = TagServiceDef()
		sp.TagPolicies = &tp
	}
	data, err := json.Marshal(&sp)
	if err != nil {
		return nil, err
	}
	if b.Policies, err = ranger.ParseServicePolicies(data); err != nil {
		return nil, err
	}
	if d.Tags != nil {
		if data, err = json.Marshal(d.Tags); err != nil {
			return nil, err
		}
		if b.Tags, err = ranger.ParseServiceTags(data); err != nil {
			return nil, err
		}
	}
	if d.Roles != nil {
		if data, err = json.Marshal(d.Roles); err != nil {
			return nil, err
		}
		if b.Roles, err = ranger.ParseRoles(data); err != nil {
			return nil, err
		}
	}
	if d.UserStore != nil {
		if data, err = json.Marshal(d.UserStore); err != nil {
			return nil, err
		}
		if b.UserStore, err = ranger.ParseUserStore(data); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// ReadRegressions reads every *.json of dir, sorted by file name.
func ReadRegressions(dir string) ([]Regression, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []Regression
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var r Regression
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// JSON is the regression as a file's content, ready to commit: the
// documents as Ranger writes them (no empty members).
func (r Regression) JSON() string {
	if r.Bundle.Policies != nil {
		sp := *r.Bundle.Policies
		if sameJSON(sp.ServiceDef, HiveServiceDef()) {
			sp.ServiceDef = nil
		}
		if sp.TagPolicies != nil && sameJSON(sp.TagPolicies.ServiceDef, TagServiceDef()) {
			tp := *sp.TagPolicies
			tp.ServiceDef = nil
			sp.TagPolicies = &tp
		}
		r.Bundle.Policies = &sp
	}
	compact, err := interop.RangerDocument(r)
	if err != nil {
		panic(err)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, compact, "", " "); err != nil {
		panic(err)
	}
	return buf.String() + "\n"
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
