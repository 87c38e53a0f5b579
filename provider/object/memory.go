package object

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
)

// What the object resource remembers about one cluster (one client) between
// calls in the same provider process. Clients live as long as the process, so
// this does too.
type memory struct {
	mu sync.Mutex
	// recent: objects a refresh just read. Terraform refreshes
	// (ReadResource) and then plans (PlanResourceChange) each object
	// milliseconds apart; handing the refresh's copy to the plan saves one
	// GET per object per plan. A copy is used at most once and only while
	// fresh.
	recent map[manifest.Identity]recentObject
	// inState: which resource id holds each object in its state. Terraform
	// plans a replacement's create while the old object still exists; this
	// tells that old object, the resource's own, from another resource's
	// object of the same name.
	inState map[string]string // by identityKey
}

const recentTTL = 30 * time.Second

type recentObject struct {
	obj  *unstructured.Unstructured
	seen time.Time
}

var memories sync.Map // *connection.Client -> *memory

func memoryOf(c *connection.Client) *memory {
	m, _ := memories.LoadOrStore(c, &memory{recent: map[manifest.Identity]recentObject{}, inState: map[string]string{}})
	mem, _ := m.(*memory)
	return mem
}

// remember keeps a copy of an object just read from the cluster.
func remember(c *connection.Client, obj *unstructured.Unstructured) {
	m := memoryOf(c)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recent[manifest.IdentityOf(obj)] = recentObject{obj: obj.DeepCopy(), seen: time.Now()}
}

// recall returns, once, the copy remember kept if it is fresh.
func recall(c *connection.Client, id manifest.Identity) (*unstructured.Unstructured, bool) {
	m := memoryOf(c)
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recent[id]
	delete(m.recent, id)
	if !ok || time.Since(r.seen) > recentTTL {
		return nil, false
	}
	return r.obj, true
}

// recordInState notes that the resource with id holds the object obj in its
// state (any version of its kind: the server stores one object).
func recordInState(c *connection.Client, obj manifest.Identity, id string) {
	m := memoryOf(c)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inState[identityKey(obj)] = id
}

// knownInState is the id recordInState noted for obj, or "".
func knownInState(c *connection.Client, obj manifest.Identity) string {
	m := memoryOf(c)
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.inState[identityKey(obj)]
}

func identityKey(id manifest.Identity) string {
	return id.GVK().GroupKind().String() + "/" + id.Namespace + "/" + id.Name
}
