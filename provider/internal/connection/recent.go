package connection

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Terraform refreshes (ReadResource) and then plans (PlanResourceChange) each
// object in the same provider process, milliseconds apart. The plan needs the
// live object the refresh just read; handing it over saves one GET per object
// per plan. A copy is used at most once and only while fresh.
const recentTTL = 30 * time.Second

type recentObject struct {
	obj  *unstructured.Unstructured
	seen time.Time
}

type recentObjects struct {
	mu   sync.Mutex
	objs map[string]recentObject
}

func recentKey(apiVersion, kind, namespace, name string) string {
	return apiVersion + "|" + kind + "|" + namespace + "|" + name
}

// Remember keeps a copy of an object just read from the cluster.
func (c *Client) Remember(obj *unstructured.Unstructured) {
	c.recent.mu.Lock()
	defer c.recent.mu.Unlock()
	if c.recent.objs == nil {
		c.recent.objs = map[string]recentObject{}
	}
	c.recent.objs[recentKey(obj.GetAPIVersion(), obj.GetKind(), obj.GetNamespace(), obj.GetName())] = recentObject{obj: obj.DeepCopy(), seen: time.Now()}
}

// Recall returns, once, the copy Remember kept if it is fresh.
func (c *Client) Recall(apiVersion, kind, namespace, name string) (*unstructured.Unstructured, bool) {
	c.recent.mu.Lock()
	defer c.recent.mu.Unlock()
	k := recentKey(apiVersion, kind, namespace, name)
	r, ok := c.recent.objs[k]
	delete(c.recent.objs, k)
	if !ok || time.Since(r.seen) > recentTTL {
		return nil, false
	}
	return r.obj, true
}

// RecordInState notes that the resource with id holds the object key in its
// state. Terraform plans a replacement's create while the old object still
// exists; KnownInState tells that old object, the resource's own, from
// another resource's object of the same name.
func (c *Client) RecordInState(key, id string) { c.inState.Store(key, id) }

// KnownInState is the id RecordInState noted for key, or "".
func (c *Client) KnownInState(key string) string {
	v, _ := c.inState.Load(key)
	s, _ := v.(string)
	return s
}
