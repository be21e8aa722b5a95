package sqlrewrite

import (
	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

var nodeDescriptor = (&pg.Node{}).ProtoReflect().Descriptor()

// walkNodes calls visit for every *pg.Node reachable from m, parents before
// children. visit returns false to skip a node's children (the caller took
// care of them). It uses protobuf reflection so that no node type can be
// missed: a new field in a future grammar is walked without code changes,
// which is what keeps the checks fail-closed.
func walkNodes(m protoreflect.ProtoMessage, visit func(n *pg.Node) bool) {
	if m == nil {
		return
	}
	walkMessage(m.ProtoReflect(), visit)
}

func walkMessage(msg protoreflect.Message, visit func(n *pg.Node) bool) {
	if !msg.IsValid() {
		return
	}
	if msg.Descriptor() == nodeDescriptor {
		n := msg.Interface().(*pg.Node)
		if !visit(n) {
			return
		}
	}
	msg.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind {
			return true
		}
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				walkMessage(l.Get(i).Message(), visit)
			}
		case fd.IsMap():
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				if fd.MapValue().Kind() == protoreflect.MessageKind {
					walkMessage(mv.Message(), visit)
				}
				return true
			})
		default:
			walkMessage(v.Message(), visit)
		}
		return true
	})
}

// strVal returns the string of a String node, "" otherwise.
func strVal(n *pg.Node) string {
	if s := n.GetString_(); s != nil {
		return s.Sval
	}
	return ""
}

// nameList joins String nodes (qualified names) for messages.
func nameList(nodes []*pg.Node) []string {
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, strVal(n))
	}
	return out
}
