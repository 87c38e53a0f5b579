package connection

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

var (
	namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// A cluster identity is recorded in state (cluster_uid) as one string whose
// form says where it came from (docs/adr/0001-crash-safe-create.md, "Cluster identity"):
//
//   - a bare UID: the UID of namespace kube-system, as every earlier version
//     recorded it, so that existing states compare unchanged;
//   - tlsCAPrefix + the SHA-256 of the CA certificate, from the connection's
//     own CA bundle, that verified the API server's certificate in the TLS
//     handshake;
//   - rootCAPrefix + the SHA-256 of the first certificate of ConfigMap
//     kube-root-ca.crt, which the cluster publishes in every namespace.
//
// cluster_uid holds the first of them the connection can read, in that
// order: only the UID tells apart two clusters that share a CA. Every one
// the connection can read is kept besides (Recorded.Also), and every one
// that can be read again is compared (CheckCluster).
const (
	tlsCAPrefix  = "tls-ca-sha256:"
	rootCAPrefix = "kube-root-ca-sha256:"

	rootCAConfigMap = "kube-root-ca.crt"
)

// source is where an identity came from.
type source int

const (
	noIdentity source = iota
	fromKubeSystem
	fromTLSCA
	fromRootCA
)

func sourceOf(identity string) source {
	switch {
	case identity == "":
		return noIdentity
	case strings.HasPrefix(identity, tlsCAPrefix):
		return fromTLSCA
	case strings.HasPrefix(identity, rootCAPrefix):
		return fromRootCA
	}
	return fromKubeSystem
}

// fingerprint is the lower-case hex SHA-256 of a certificate's DER bytes, as
// `openssl x509 -fingerprint -sha256` prints it without the colons.
func fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// handshakeCAs records, from every response of a client, the CAs that
// verified the server's certificate: the last certificate of each verified
// chain. It sees only what the connection itself did, so it needs no
// permission. A connection without a CA bundle of its own (insecure, plain
// HTTP, or the system's trusted roots) has no handshakeCAs: an unverified
// certificate names nothing, and a public root CA is shared by countless
// servers.
type handshakeCAs struct {
	mu      sync.Mutex
	anchors []string // fingerprints, of the last response that had any
}

func (h *handshakeCAs) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if resp != nil && resp.TLS != nil && len(resp.TLS.VerifiedChains) > 0 {
			var seen []string
			for _, chain := range resp.TLS.VerifiedChains {
				if len(chain) == 0 {
					continue
				}
				if fp := fingerprint(chain[len(chain)-1].Raw); !slices.Contains(seen, fp) {
					seen = append(seen, fp)
				}
			}
			h.mu.Lock()
			h.anchors = seen
			h.mu.Unlock()
		}
		return resp, err
	})
}

func (h *handshakeCAs) get() []string {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.anchors
}

// handshakeFor is the recorder of a connection's handshake CAs; nil, with
// the reason, when the connection has no CA bundle of its own to name the
// cluster by.
func handshakeFor(cfg *rest.Config) (*handshakeCAs, string) {
	switch {
	case cfg.Insecure:
		return nil, "the connection is insecure (insecure = true), so the server's certificate is not verified " +
			"and names nothing"
	case strings.HasPrefix(strings.ToLower(cfg.Host), "http://"):
		return nil, "the connection is plain HTTP, without a certificate"
	case len(cfg.CAData) == 0 && cfg.CAFile == "":
		return nil, "the connection trusts the system's CAs (no cluster_ca_certificate or certificate-authority), " +
			"which many unrelated servers share"
	}
	return &handshakeCAs{}, ""
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// clusterIdentity caches what a Client learned of its cluster's identity.
type clusterIdentity struct {
	mu sync.Mutex
	// kube-system's UID; "" when the credentials may not read it.
	uid      string
	uidKnown bool
	// The fingerprints of kube-root-ca.crt, once read in some namespace
	// (every namespace has the same), and the namespaces it could not be
	// read in.
	rootCA        []string
	rootCAMissing map[string]bool
	// handshake is nil when the connection has no CA bundle of its own;
	// why says which, for messages.
	handshake *handshakeCAs
	why       string
}

// observed is what the cluster shows of itself now, to this connection.
type observed struct {
	uid     string   // kube-system's UID, or ""
	anchors []string // handshake CA fingerprints
	rootCA  []string // kube-root-ca.crt fingerprints
	rootNS  string   // the namespace kube-root-ca.crt was looked for in
	noCA    string   // why there are no handshake CAs
}

// preferred is the identity to record for a new object.
func (o observed) preferred() string {
	switch {
	case o.uid != "":
		return o.uid
	case len(o.anchors) > 0:
		return tlsCAPrefix + o.anchors[0]
	case len(o.rootCA) > 0:
		return rootCAPrefix + o.rootCA[0]
	}
	return ""
}

// seen is every identity o holds, in recorded form.
func (o observed) seen() []string {
	var ids []string
	if o.uid != "" {
		ids = append(ids, o.uid)
	}
	if len(o.anchors) > 0 {
		ids = append(ids, tlsCAPrefix+o.anchors[0])
	}
	if len(o.rootCA) > 0 {
		ids = append(ids, rootCAPrefix+o.rootCA[0])
	}
	return ids
}

// kubeSystemUID reads (once per Client) the UID of namespace kube-system: ""
// when the credentials may not read it. Any other failure is an error and is
// not cached, so a later call tries again.
func (c *Client) kubeSystemUID(ctx context.Context) (string, error) {
	c.identity.mu.Lock()
	defer c.identity.mu.Unlock()
	if c.identity.uidKnown {
		return c.identity.uid, nil
	}
	ns, err := c.Dynamic.Resource(namespaces).Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	switch {
	case apierrors.IsForbidden(err) || apierrors.IsNotFound(err):
		c.identity.uid, c.identity.uidKnown = "", true
	case err != nil:
		return "", fmt.Errorf("identifying the cluster (reading namespace kube-system): %w", err)
	default:
		c.identity.uid, c.identity.uidKnown = string(ns.GetUID()), true
	}
	return c.identity.uid, nil
}

// rootCA reads the certificates of ConfigMap kube-root-ca.crt in namespace
// (default when it is ""): nil when the credentials may not read it or it is
// not there (a cluster whose controller manager does not publish it).
func (c *Client) rootCA(ctx context.Context, namespace string) ([]string, string, error) {
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	c.identity.mu.Lock()
	defer c.identity.mu.Unlock()
	if c.identity.rootCAMissing == nil {
		c.identity.rootCAMissing = map[string]bool{}
	}
	if c.identity.rootCA != nil || c.identity.rootCAMissing[namespace] {
		return c.identity.rootCA, namespace, nil
	}
	cm, err := c.Dynamic.Resource(configMaps).Namespace(namespace).Get(ctx, rootCAConfigMap, metav1.GetOptions{})
	switch {
	case apierrors.IsForbidden(err) || apierrors.IsNotFound(err):
		c.identity.rootCAMissing[namespace] = true
		return nil, namespace, nil
	case err != nil:
		return nil, namespace, fmt.Errorf("identifying the cluster (reading ConfigMap %s in namespace %s): %w", rootCAConfigMap, namespace, err)
	}
	bundle, _, _ := unstructured.NestedString(cm.Object, "data", "ca.crt")
	c.identity.rootCA = pemFingerprints([]byte(bundle))
	if c.identity.rootCA == nil {
		c.identity.rootCAMissing[namespace] = true // published empty: nothing to name the cluster by
	}
	return c.identity.rootCA, namespace, nil
}

// pemFingerprints are the fingerprints of the certificates in a PEM bundle,
// in order; nil when it holds none.
func pemFingerprints(bundle []byte) []string {
	var fps []string
	for {
		var block *pem.Block
		block, bundle = pem.Decode(bundle)
		if block == nil {
			return fps
		}
		if block.Type == "CERTIFICATE" {
			if _, err := x509.ParseCertificate(block.Bytes); err == nil {
				fps = append(fps, fingerprint(block.Bytes))
			}
		}
	}
}

// observe gathers every identity the cluster shows now, to this connection:
// kube-system's UID, the handshake's CAs and kube-root-ca.crt's. Each read is
// made once per Client (kube-root-ca.crt once, or once per namespace where it
// cannot be read), so a plan of many objects pays for them once.
func (c *Client) observe(ctx context.Context, namespace string) (observed, error) {
	var o observed
	var err error
	if o.uid, err = c.kubeSystemUID(ctx); err != nil {
		return o, err
	}
	o.anchors, o.noCA = c.identity.handshake.get(), c.identity.why
	if o.rootCA, o.rootNS, err = c.rootCA(ctx, namespace); err != nil {
		return o, err
	}
	return o, nil
}
