package handon

import (
	"time"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
)

// Members hands on the reads of the objects of a resource that manages many
// (a Helm release, a manifest set), by this package's rule: a refresh's
// reads to the plan that follows it (Terraform, OpenTofu), and one plan's
// reads and dry runs to the next, since Pulumi plans an update in its Diff
// and again in its Update. A set of 200 objects would otherwise read every
// object once per call. Keyed by the resource's id and the object's key; an
// apply or a destroy forgets the resource's copies before it writes, so no
// later plan in the process sees an object as it was before. Its zero value
// is ready; each resource type keeps its own.
type Members struct {
	store Store[memberKey, Read]
}

type memberKey struct{ owner, object string }

// Remember keeps what a call read (and dry-ran) of object of owner, for the
// next call of owner; a Read with nothing in it is not kept.
func (m *Members) Remember(c *connection.Client, owner, object string, r Read) {
	if r.Obj == nil && r.Dry == nil {
		return
	}
	if r.Seen.IsZero() {
		r.Seen = time.Now()
	}
	m.store.Put(c, memberKey{owner, object}, r, r.Seen)
}

// Recall returns, once, what Remember kept of object if it is fresh; an
// empty Read otherwise.
func (m *Members) Recall(c *connection.Client, owner, object string) Read {
	r, _, _ := m.store.Take(c, memberKey{owner, object})
	return r
}

// Forget drops every copy kept of owner's objects.
func (m *Members) Forget(c *connection.Client, owner string) {
	m.store.Drop(c, func(k memberKey) bool { return k.owner == owner })
}
