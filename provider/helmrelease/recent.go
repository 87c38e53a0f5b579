package helmrelease

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/handon"
)

// recentReads are objects of a release just read, handed on to the next
// plan of the same release in this process (package handon): a refresh's
// reads to the plan that follows it (Terraform, OpenTofu), and one plan's
// reads and dry runs to the next, since Pulumi plans an update in its Diff
// and again in its Update, in the preview and again in the update. A
// 200-object release would otherwise read every object once per plan.
// Keyed by the release's id (namespace/name) and the object's key; an apply
// or a destroy drops the release's copies before it writes (forgetRelease).
var recentReads handon.Store[recentKey, recentObject]

type recentKey struct{ release, object string }

type recentObject struct {
	live *unstructured.Unstructured // nil: not read (new to the release)
	seen time.Time                  // when live was read: handing it on does not renew it
	// body is the bodyHash a plan dry-ran against live, and dry the answer
	// (nil without one).
	body string
	dry  *unstructured.Unstructured
}

// answer is the dry run's answer to a body of hash body against this copy,
// if a plan got one.
func (r recentObject) answer(body string) *unstructured.Unstructured {
	if r.dry == nil || body == "" || r.body != body {
		return nil
	}
	return r.dry.DeepCopy()
}

// remember keeps what was read (and dry-run) of one object of release id,
// for the next plan of the release.
func remember(c *connection.Client, id, key string, r recentObject) {
	if r.live == nil && r.dry == nil {
		return
	}
	if r.seen.IsZero() {
		r.seen = time.Now()
	}
	recentReads.Put(c, recentKey{id, key}, r, r.seen)
}

// recall returns, once, what remember kept of an object if it is fresh.
func recall(c *connection.Client, id, key string) recentObject {
	r, _, _ := recentReads.Take(c, recentKey{id, key})
	return r
}

// forgetRelease drops every copy kept of release id's objects: an apply and
// a destroy call it before they write, so no later plan in this process
// sees an object as it was before.
func forgetRelease(c *connection.Client, id string) {
	recentReads.Drop(c, func(k recentKey) bool { return k.release == id })
}
