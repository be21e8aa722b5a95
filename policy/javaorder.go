package policy

import "unicode/utf16"

// javaHashSetOrder returns names in the order a java.util.HashSet holding
// them, inserted in the given order, iterates them.
//
// Ranger evaluates `_any` by walking the service-def's access types as
// RangerServiceDefHelper collects them (Collectors.toSet(), a HashSet),
// and the first allowed type of that walk names the policy a `_any`
// result reports. When a tag policy and a resource policy of one
// priority both allow, which of the two Ranger reports depends on that
// order (the tag policy's type may come first or not), so pgranger
// walks the same order.
//
// A HashSet is a HashMap: a table of 16 buckets, doubled whenever more
// than three quarters are used; a name goes to bucket (h ^ h>>>16) &
// (buckets-1) of its String.hashCode h; a bucket keeps insertion order
// (a resize splits it preserving that order) and is iterated in bucket
// order. Buckets of eight or more entries become trees in tables of 64
// buckets or more; sets of access types are far smaller.
func javaHashSetOrder(names []string) []string {
	n := 16
	for len(names) > n*3/4 {
		n *= 2
	}
	buckets := make([][]string, n)
	seen := map[string]bool{}
	for _, s := range names {
		if seen[s] {
			continue
		}
		seen[s] = true
		h := javaStringHash(s)
		i := (h ^ int32(uint32(h)>>16)) & int32(n-1)
		buckets[i] = append(buckets[i], s)
	}
	out := make([]string, 0, len(seen))
	for _, b := range buckets {
		out = append(out, b...)
	}
	return out
}

// javaStringHash is java.lang.String.hashCode: s[0]*31^(n-1) + … + s[n-1]
// over UTF-16 code units, in int arithmetic.
func javaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}
