package ranger

import (
	"fmt"
	"maps"
	"strings"
	"time"
)

// Writing tags: what Ranger Admin's tag import (PUT
// /service/tags/importservicetags/, op add_or_update) does to a service's
// tags. A resource is found by its resource elements; the tag list sent
// for it replaces its tags, and an empty list deletes the resource. Tag
// definitions are created when missing and never updated.

// TagResourceKey identifies a tagged resource by its elements (names and
// value sets, with their flags), as Ranger's resource signature does.
func TagResourceKey(elements map[string]RangerPolicyResource) string {
	var b strings.Builder
	writeResources(&b, elements)
	return b.String()
}

// ResourceTags returns the tags attached to the resource with these
// elements, in stored order (nil when the resource has none).
func (st *ServiceTags) ResourceTags(elements map[string]RangerPolicyResource) []RangerTag {
	r := st.findResource(elements)
	if r == nil {
		return nil
	}
	var out []RangerTag
	for _, id := range st.ResourceToTagIDs[r.ID] {
		if t, ok := st.Tags[id]; ok {
			out = append(out, t)
		}
	}
	return out
}

func (st *ServiceTags) findResource(elements map[string]RangerPolicyResource) *RangerServiceResource {
	key := TagResourceKey(elements)
	for i := range st.ServiceResources {
		if TagResourceKey(st.ServiceResources[i].ResourceElements) == key {
			return &st.ServiceResources[i]
		}
	}
	return nil
}

// SetResourceTags makes tags the whole tag list of the resource with
// these elements: add_or_update for one resource. A tag of the list that
// the resource already carries (same type and attributes) keeps its id;
// an empty list removes the resource. Tags no resource refers to any more
// are dropped. It reports whether anything changed.
func (st *ServiceTags) SetResourceTags(serviceName string, elements map[string]RangerPolicyResource, tags []RangerTag, now time.Time) bool {
	if st.Tags == nil {
		st.Tags = map[int64]RangerTag{}
	}
	if st.TagDefinitions == nil {
		st.TagDefinitions = map[int64]RangerTagDef{}
	}
	if st.ResourceToTagIDs == nil {
		st.ResourceToTagIDs = map[int64][]int64{}
	}
	before := st.ResourceTags(elements)
	if sameTags(before, tags) && (len(tags) > 0 || st.findResource(elements) == nil) {
		return false
	}
	r := st.findResource(elements)
	if len(tags) == 0 {
		if r != nil {
			id := r.ID
			delete(st.ResourceToTagIDs, id)
			for i := range st.ServiceResources {
				if st.ServiceResources[i].ID == id {
					st.ServiceResources = append(st.ServiceResources[:i], st.ServiceResources[i+1:]...)
					break
				}
			}
		}
		st.dropOrphanTags()
		return true
	}
	if r == nil {
		st.ServiceResources = append(st.ServiceResources, RangerServiceResource{
			ID: st.nextResourceID(), GUID: fmt.Sprintf("pgranger-res-%d", now.UnixNano()), ServiceName: serviceName,
			ResourceElements: cloneElements(elements),
		})
		r = &st.ServiceResources[len(st.ServiceResources)-1]
	}
	var ids []int64
	for _, t := range tags {
		st.ensureTagDef(t.Type)
		id := int64(-1)
		for _, old := range st.ResourceToTagIDs[r.ID] {
			if o, ok := st.Tags[old]; ok && o.Type == t.Type && maps.Equal(o.Attributes, t.Attributes) {
				id = old
				break
			}
		}
		if id < 0 {
			id = st.nextTagID()
			t.ID = id
			if t.GUID == "" {
				t.GUID = fmt.Sprintf("pgranger-tag-%d-%d", now.UnixNano(), id)
			}
			st.Tags[id] = t
		}
		ids = append(ids, id)
	}
	st.ResourceToTagIDs[r.ID] = ids
	st.dropOrphanTags()
	return true
}

// ImportAddOrUpdate applies a ServiceTags payload with op add_or_update:
// each of its resources gets the tag list the payload maps to it.
func (st *ServiceTags) ImportAddOrUpdate(in *ServiceTags, now time.Time) {
	for _, r := range in.ServiceResources {
		var tags []RangerTag
		for _, id := range in.ResourceToTagIDs[r.ID] {
			if t, ok := in.Tags[id]; ok {
				tags = append(tags, t)
			}
		}
		serviceName := r.ServiceName
		if serviceName == "" {
			serviceName = in.ServiceName
		}
		st.SetResourceTags(serviceName, r.ResourceElements, tags, now)
	}
	for _, d := range in.TagDefinitions {
		st.ensureTagDef(d.Name)
	}
}

// Bump records a change of the service's tags (tagVersion + 1).
func (st *ServiceTags) Bump(now time.Time) {
	if st.TagVersion < 0 {
		st.TagVersion = 0
	}
	st.TagVersion++
	st.TagUpdateTime = Timestamp{Time: now}
}

func (st *ServiceTags) ensureTagDef(name string) {
	for _, d := range st.TagDefinitions {
		if d.Name == name {
			return
		}
	}
	var id int64
	for k := range st.TagDefinitions {
		id = max(id, k)
	}
	id++
	st.TagDefinitions[id] = RangerTagDef{ID: id, Name: name, Source: "Internal"}
}

func (st *ServiceTags) nextResourceID() int64 {
	var id int64
	for _, r := range st.ServiceResources {
		id = max(id, r.ID)
	}
	return id + 1
}

func (st *ServiceTags) nextTagID() int64 {
	var id int64
	for k := range st.Tags {
		id = max(id, k)
	}
	return id + 1
}

func (st *ServiceTags) dropOrphanTags() {
	used := map[int64]bool{}
	for _, ids := range st.ResourceToTagIDs {
		for _, id := range ids {
			used[id] = true
		}
	}
	for id := range st.Tags {
		if !used[id] {
			delete(st.Tags, id)
		}
	}
}

func sameTags(a, b []RangerTag) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || !maps.Equal(a[i].Attributes, b[i].Attributes) {
			return false
		}
	}
	return true
}

func cloneElements(e map[string]RangerPolicyResource) map[string]RangerPolicyResource {
	out := make(map[string]RangerPolicyResource, len(e))
	for k, v := range e {
		v.Values = clone(v.Values)
		out[k] = v
	}
	return out
}

// TagPayload is the add_or_update document that sets one resource's tags:
// what pgranger sends to Ranger Admin's tag import.
func TagPayload(serviceName string, elements map[string]RangerPolicyResource, tags []RangerTag) *ServiceTags {
	st := &ServiceTags{ServiceName: serviceName, Op: "add_or_update", TagVersion: -1,
		TagDefinitions: map[int64]RangerTagDef{}, Tags: map[int64]RangerTag{}, ResourceToTagIDs: map[int64][]int64{}}
	seenDef := map[string]bool{}
	var ids []int64
	for i, t := range tags {
		id := int64(i + 1)
		t.ID = id
		st.Tags[id] = t
		ids = append(ids, id)
		if !seenDef[t.Type] {
			seenDef[t.Type] = true
			st.TagDefinitions[int64(len(st.TagDefinitions)+1)] = RangerTagDef{ID: int64(len(st.TagDefinitions) + 1), Name: t.Type}
		}
	}
	st.ServiceResources = []RangerServiceResource{{ID: 1, ServiceName: serviceName, ResourceElements: cloneElements(elements)}}
	st.ResourceToTagIDs[1] = ids
	if ids == nil {
		st.ResourceToTagIDs[1] = []int64{}
	}
	return st
}

// TagTypes lists the types of tags, in order.
func TagTypes(tags []RangerTag) []string {
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		out = append(out, t.Type)
	}
	return out
}
