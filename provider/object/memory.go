package object

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/handon"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
)

// recentReads are objects just read, handed on to the next plan of the same
// object (package handon): Terraform refreshes (ReadResource) and then plans
// (PlanResourceChange) each object milliseconds apart; Pulumi plans an update
// two or more times in a row (its Diff, then the plan its Update makes; a
// preview previews the Update too). Handing the copy on, with the dry run the
// last plan sent against it, saves a GET and a dry run per plan after the
// first. Every write to an object drops its copy first (forget).
var recentReads handon.Store[manifest.Identity, handon.Read]

// remember keeps a copy of an object read from the cluster at seen, with the
// body a plan's dry run sent against it and the answer (nil without one).
func remember(c *connection.Client, obj *unstructured.Unstructured, seen time.Time, sent []byte, dry *unstructured.Unstructured) {
	r := handon.Read{Obj: obj.DeepCopy(), Seen: seen, Sent: sent}
	if dry != nil {
		r.Dry = dry.DeepCopy()
	}
	recentReads.Put(c, manifest.IdentityOf(obj), r, seen)
}

// recall returns, once, what remember kept if it is fresh.
func recall(c *connection.Client, id manifest.Identity) (handon.Read, bool) {
	r, _, ok := recentReads.Take(c, id)
	return r, ok
}

// forget drops what remember kept of an object, under any version of its
// kind, and in any namespace when id has none (the default namespace is
// filled in by the apply): every write to it calls this first, so no plan
// after the write sees the object as it was before.
func forget(c *connection.Client, id manifest.Identity) {
	kind := id.GVK().GroupKind()
	recentReads.Drop(c, func(kept manifest.Identity) bool {
		return kept.Name == id.Name && kept.GVK().GroupKind() == kind && (id.Namespace == "" || kept.Namespace == id.Namespace)
	})
}

// inState records which resource id holds each object in its state, by
// client and identityKey. Terraform plans a replacement's create while the
// old object still exists; this tells that old object, the resource's own,
// from another resource's object of the same name. Clients live as long as
// the process, and so does this.
var inState sync.Map // inStateKey -> string

type inStateKey struct {
	c   *connection.Client
	obj string
}

// recordInState notes that the resource with id holds the object obj in its
// state (any version of its kind: the server stores one object).
func recordInState(c *connection.Client, obj manifest.Identity, id string) {
	inState.Store(inStateKey{c, identityKey(obj)}, id)
}

// knownInState is the id recordInState noted for obj, or "".
func knownInState(c *connection.Client, obj manifest.Identity) string {
	id, _ := inState.Load(inStateKey{c, identityKey(obj)})
	s, _ := id.(string)
	return s
}

func identityKey(id manifest.Identity) string {
	return id.GVK().GroupKind().String() + "/" + id.Namespace + "/" + id.Name
}

// recallOrGet uses the copy a refresh or the last plan just read, if there is
// one, or reads the object.
func recallOrGet(ctx context.Context, c *connection.Client, id manifest.Identity) (handon.Read, error) {
	if r, ok := recall(c, id); ok {
		return r, nil
	}
	seen := time.Now()
	obj, err := get(ctx, c, id)
	return handon.Read{Obj: obj, Seen: seen}, err
}

func get(ctx context.Context, c *connection.Client, id manifest.Identity) (*unstructured.Unstructured, error) {
	return c.Get(ctx, id.GVK(), id.Namespace, id.Name)
}
