package helmrelease

import (
	"time"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/handon"
)

// recentReads are objects of a release just read, handed on to the next
// call for the same release in this process (package handon, by its rule):
// a refresh's reads to the plan that follows it (Terraform, OpenTofu), and
// one plan's reads and dry runs to the next, since Pulumi plans an update in
// its Diff and again in its Update, in the preview and again in the update.
// A 200-object release would otherwise read every object once per plan.
// Keyed by the release's id (namespace/name) and the object's key; an apply
// or a destroy drops the release's copies before it writes (forgetRelease).
// A dry run is identified by its body's keyed hash (bodyHash).
var recentReads handon.Store[recentKey, handon.Read]

type recentKey struct{ release, object string }

// remember keeps what a call read (and dry-ran) of one object of release
// id, for the next call of the release.
func remember(c *connection.Client, id, key string, r handon.Read) {
	if r.Obj == nil && r.Dry == nil {
		return
	}
	if r.Seen.IsZero() {
		r.Seen = time.Now()
	}
	recentReads.Put(c, recentKey{id, key}, r, r.Seen)
}

// recall returns, once, what remember kept of an object if it is fresh.
func recall(c *connection.Client, id, key string) handon.Read {
	r, _, _ := recentReads.Take(c, recentKey{id, key})
	return r
}

// forgetRelease drops every copy kept of release id's objects: an apply and
// a destroy call it before they write, so no later plan in this process
// sees an object as it was before.
func forgetRelease(c *connection.Client, id string) {
	recentReads.Drop(c, func(k recentKey) bool { return k.release == id })
}
