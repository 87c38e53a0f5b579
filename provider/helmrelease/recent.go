package helmrelease

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
)

// recentReads are objects a refresh just read, handed to the plan that
// follows it: Terraform and OpenTofu refresh a resource and plan it
// milliseconds apart in the same provider process, and a 200-object release
// would otherwise read every object twice. The framework makes a new
// Resource for every call, so the copies live at the package's level, by
// client (a client is one cluster and one set of credentials), for at most
// recentTTL, and are handed over once.
var recentReads sync.Map // recentKey -> recentRead

const recentTTL = 30 * time.Second

type recentRead struct {
	obj  *unstructured.Unstructured
	seen time.Time
}

func recentKey(c *connection.Client, id, key string) string {
	return fmt.Sprintf("%p|%s|%s", c, id, key)
}

func remember(c *connection.Client, id, key string, live *unstructured.Unstructured) {
	recentReads.Store(recentKey(c, id, key), recentRead{obj: live, seen: time.Now()})
}

func recall(c *connection.Client, id, key string) *unstructured.Unstructured {
	v, ok := recentReads.LoadAndDelete(recentKey(c, id, key))
	if !ok {
		return nil
	}
	if r, ok := v.(recentRead); ok && time.Since(r.seen) < recentTTL {
		return r.obj
	}
	return nil
}
