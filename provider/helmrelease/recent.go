package helmrelease

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/handon"
)

// recentReads are objects a refresh just read, handed to the plan that
// follows it (package handon): a 200-object release would otherwise read
// every object twice. Keyed by the release's id and the object's key.
var recentReads handon.Store[recentKey, *unstructured.Unstructured]

type recentKey struct{ release, object string }

func remember(c *connection.Client, id, key string, live *unstructured.Unstructured) {
	recentReads.Put(c, recentKey{id, key}, live, time.Now())
}

func recall(c *connection.Client, id, key string) *unstructured.Unstructured {
	live, _, _ := recentReads.Take(c, recentKey{id, key})
	return live
}
