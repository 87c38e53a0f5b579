package connection

import (
	"context"
	"errors"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The API server holds every create in a namespace it cannot find for 50 ms
// before it answers NotFound: its NamespaceLifecycle admission gives its cache
// time to see a namespace made a moment ago. A plan that makes a namespace and
// 200 objects in it would sit through that wait in each object's dry run, to
// learn 200 times what the first answer said. So a client remembers, briefly,
// the namespaces the server said it does not have, and a dry run in one of
// them is answered here, as the server would answer it (see ssa.Apply).
//
// Forgetting late costs only plan-time detail: a dry run not sent leaves the
// object "known after apply", as the server's NotFound does, and the apply
// always asks the server. So the memory is short, and any answer that shows
// the namespace exists ends it: an apply or dry run that goes through in it,
// its own apply, a read of it (NamespaceExists).
const missingNamespaceMemory = 10 * time.Second

type missingNamespaces struct {
	mu sync.Mutex
	at map[string]time.Time // when a request was last told the namespace is missing
}

// NamespaceMissing reports whether a request of this client was told, within
// the last 10 seconds, that namespace ns does not exist, and none has found
// it since.
func (c *Client) NamespaceMissing(ns string) bool {
	m := &c.missing
	m.mu.Lock()
	defer m.mu.Unlock()
	at, ok := m.at[ns]
	if ok && time.Since(at) > missingNamespaceMemory {
		delete(m.at, ns)
		ok = false
	}
	return ok
}

// NoteNamespace records what an answer to a request in namespace ns says of
// it: err is nil (the request went through there, so it exists) or a
// NotFound that names the namespace (it does not). Other answers say
// nothing of it.
func (c *Client) NoteNamespace(ns string, err error) {
	if ns == "" {
		return
	}
	missing := IsNamespaceNotFound(err, ns)
	if err != nil && !missing {
		return
	}
	m := &c.missing
	m.mu.Lock()
	defer m.mu.Unlock()
	if !missing {
		delete(m.at, ns)
		return
	}
	if m.at == nil {
		m.at = map[string]time.Time{}
	}
	m.at[ns] = time.Now()
}

// NamespaceExists asks the server whether namespace ns exists, and notes the
// answer for the requests after it. It always asks: a caller about to make
// the namespace must not act on a note another caller left.
func (c *Client) NamespaceExists(ctx context.Context, ns string) (bool, error) {
	_, err := c.GetMetadata(ctx, schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, "", ns)
	switch {
	case err == nil:
		c.NoteNamespace(ns, nil)
		return true, nil
	case apierrors.IsNotFound(err):
		c.NoteNamespace(ns, NamespaceNotFound(ns))
		return false, nil
	}
	return false, err
}

// NamespaceNotFound is the API server's answer to a request in a namespace
// it does not have.
func NamespaceNotFound(ns string) error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, ns)
}

// IsNamespaceNotFound reports whether err is the API server's answer that
// namespace ns does not exist (rather than that an object in it does not).
func IsNamespaceNotFound(err error, ns string) bool {
	var status apierrors.APIStatus
	if err == nil || !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d != nil && d.Group == "" && d.Kind == "namespaces" && d.Name == ns
}
