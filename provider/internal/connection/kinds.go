package connection

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
)

// KindGone reports whether the cluster definitely no longer serves gvk: its
// group version is unknown to the server (404), or served without that kind.
// A failed or partial discovery is an error, never "gone", so an aggregated API
// that is briefly down does not make objects drop out of state.
func (c *Client) KindGone(gvk schema.GroupVersionKind) (bool, error) {
	c.mapper.Reset()
	if gvk.Group == "" {
		// The core group comes with the API server: a core kind missing
		// from discovery is a discovery that failed (a proxy's 404 on
		// /api), never a kind that is gone.
		return false, fmt.Errorf("discovering %s: the API server's discovery does not list it", gvk.GroupVersion())
	}
	list, err := c.Discovery.ServerResourcesForGroupVersion(gvk.GroupVersion().String())
	if errors.Is(err, memory.ErrCacheNotFound) {
		// The cache answers a group version its discovery did not list
		// with ErrCacheNotFound, which a failed discovery of the group
		// list can cause too: asked directly, the server says.
		direct, derr := discovery.NewDiscoveryClientForConfig(c.Config)
		if derr != nil {
			return false, fmt.Errorf("discovering %s: %w", gvk.GroupVersion(), derr)
		}
		list, err = direct.ServerResourcesForGroupVersion(gvk.GroupVersion().String())
	}
	if apierrors.IsNotFound(err) {
		c.forgetEstablished(gvk.GroupKind())
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("discovering %s: %w", gvk.GroupVersion(), err)
	}
	for _, r := range list.APIResources {
		if r.Kind == gvk.Kind {
			return false, nil
		}
	}
	c.forgetEstablished(gvk.GroupKind())
	return true, nil
}

// GoneWithItsKind reports whether err, from a request about an object of
// gvk, says that the object is gone with its kind: a NoMatch, or a 404 for
// a kind the client still had mapped (the server no longer routes it), that
// discovery confirms (KindGone). A CRD deleted takes every object of its
// kind with it.
func (c *Client) GoneWithItsKind(err error, gvk schema.GroupVersionKind) bool {
	if !meta.IsNoMatchError(err) && !apierrors.IsNotFound(err) {
		return false
	}
	gone, derr := c.KindGone(gvk)
	return derr == nil && gone
}

// MissingCoreKind is an error when gvk is in the core group (apiVersion v1)
// and the cluster does not serve it. Other kinds may be added later in the
// same run, by a CRD or an aggregated API; core kinds come with the API server
// itself and no CRD can add one (a CRD's group must contain a dot), so a miss
// is a typo that can be refused at plan. A discovery that lists no core kind
// at all is failing, and the error says so instead. Nil for anything else,
// including a discovery that returned an error.
func (c *Client) MissingCoreKind(gvk schema.GroupVersionKind) error {
	if gvk.Group != "" {
		return nil
	}
	if _, err := c.Mapping(gvk); !meta.IsNoMatchError(err) {
		return nil
	}
	// Every API server serves Namespace: a discovery without it is broken
	// (a 404 from GET /api, a proxy answering in the server's place), and
	// says nothing about the kind asked for.
	if _, err := c.Mapping(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}); meta.IsNoMatchError(err) {
		return discoveryFailing{fmt.Errorf("the API server's discovery lists no kind of the core group (apiVersion v1), not even "+
			"Namespace, which every API server serves, so it cannot say whether it serves %q: its discovery is "+
			"failing (GET /api answered 404, or something in front of the server answers in its place). Check "+
			"`kubectl get --raw /api` through the same connection. Nothing was decided; run again when discovery "+
			"lists apiVersion v1", gvk.Kind)}
	}
	return unknownKind{fmt.Errorf("the cluster does not serve kind %q in apiVersion %q. Kinds of the core group (apiVersion v1) "+
		"come with the API server, and no CustomResourceDefinition can add one: check the spelling and "+
		"capitalisation of kind and apiVersion (kubectl api-resources lists them)", gvk.Kind, gvk.Version)}
}

// discoveryFailing is MissingCoreKind's error when discovery lists no core
// kind at all: an outage of discovery, not a kind the user got wrong.
type discoveryFailing struct{ error }

// DiscoveryFailing reports MissingCoreKind's error for a discovery that lists
// no core kind at all: no verdict on the kind or the object.
func DiscoveryFailing(err error) bool {
	var d discoveryFailing
	return errors.As(err, &d)
}

func (d discoveryFailing) Unwrap() error { return d.error }

// KindSummary is the summary of a diagnostic for err, an error about a kind
// the cluster does not serve (MissingCoreKind's, or a mapping's): "Unknown
// kind" only when discovery answered and lacks the kind, "API discovery
// failed" when discovery itself is failing (an outage, a proxy in the
// server's place), which says nothing about the kind.
func KindSummary(err error) string {
	var u unknownKind
	if errors.As(err, &u) || meta.IsNoMatchError(err) {
		return "Unknown kind"
	}
	return DiscoveryFailed
}

// unknownKind is MissingCoreKind's error when discovery answered and lacks
// the kind: a typo.
type unknownKind struct{ error }

func (u unknownKind) Unwrap() error { return u.error }

// DiscoveryFailed is the summary of a diagnostic for a discovery that failed.
const DiscoveryFailed = "API discovery failed"
