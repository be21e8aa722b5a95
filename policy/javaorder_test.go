package policy

import (
	"slices"
	"testing"
)

// TestJavaHashSetOrder: the orders Java 17 prints for
// new HashSet<>(List.of(...)) of these names (and String.hashCode values).
func TestJavaHashSetOrder(t *testing.T) {
	if h := javaStringHash("select"); h != -906021636 {
		t.Errorf("hash(select) = %d, want -906021636", h)
	}
	if h := javaStringHash("tempudfadmin"); h != -212063796 {
		t.Errorf("hash(tempudfadmin) = %d, want -212063796", h)
	}
	hive := []string{"select", "update", "create", "drop", "alter", "index", "lock", "all", "read", "write", "repladmin", "serviceadmin", "tempudfadmin", "refresh"}
	want := []string{"drop", "all", "select", "read", "update", "index", "refresh", "tempudfadmin", "serviceadmin", "create", "lock", "repladmin", "write", "alter"}
	if got := javaHashSetOrder(hive); !slices.Equal(got, want) {
		t.Errorf("hive access types:\n got %v\nwant %v", got, want)
	}
}
