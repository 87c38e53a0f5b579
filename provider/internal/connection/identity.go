package connection

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
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
// They are tried in that order for a new object: only the UID tells apart two
// clusters that share a CA.
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

// Unreachable reports an error that says nothing about whether an object
// exists: the credentials were refused, the server failed or did not answer.
// Such an error must never be read as "the object is gone".
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true // no answer from the server at all
	}
	code := status.Status().Code
	return code == http.StatusUnauthorized || code == http.StatusForbidden || code >= 500 ||
		apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err)
}

// Explain is err's text, followed by its RequestRemedy when it has one.
func Explain(err error) string {
	if remedy := RequestRemedy(err); remedy != "" {
		return err.Error() + "\n\n" + remedy
	}
	return err.Error()
}

// RequestRemedy is err's Remedy when err came from a request to the cluster
// (an API status, or a request that got no answer), else "". It is for a step
// whose errors may be of another kind too (a chart's template, a hook's Job,
// a release record that names another owner), which Remedy's last case would
// call an unreachable cluster.
func RequestRemedy(err error) string {
	var status apierrors.APIStatus
	var request *url.Error
	var network net.Error
	if err != nil && (errors.As(err, &status) || errors.As(err, &request) || errors.As(err, &network) ||
		IsNetworkFailure(err) || noServer(err) || untrustedServer(err) || strings.Contains(err.Error(), "getting credentials: ")) {
		return Remedy(err)
	}
	return ""
}

// Remedy says what a user can do about an error from the cluster, or "" when
// the error speaks for itself.
func Remedy(err error) string {
	switch {
	case apierrors.IsUnauthorized(err):
		return "The cluster refused the credentials (401 Unauthorized): a token or client certificate has " +
			"probably expired. Renew it (for example log in again, or refresh the kubeconfig) and run again."
	case apierrors.IsForbidden(err):
		return "The credentials are valid but not allowed to do this (403 Forbidden). Check the RBAC rules " +
			"for this user, or use a context with more rights."
	case err != nil && strings.Contains(err.Error(), "getting credentials: "):
		return "The exec credential plugin (cluster_connection.exec, or users[].user.exec in the kubeconfig) " +
			"failed, so nothing was sent to the cluster. Check that its command is installed and on PATH and " +
			"that it prints a token when run by hand (for example, that you are logged in to the cloud provider)."
	case untrustedServer(err):
		return "The API server's certificate is not trusted by this connection's CA (or does not name the host), " +
			"so nothing was sent. Check that cluster_connection.cluster_ca_certificate (or the kubeconfig's " +
			"certificate-authority-data) is the CA of the cluster that host points at, and that host is the " +
			"cluster's address."
	case noServer(err):
		return "Nothing answered at the API server's address (connection refused, or the host name is unknown). " +
			"Check cluster_connection.host (or the server of the kubeconfig's cluster) and that the cluster is " +
			"running. Nothing was decided from this answer; run again when the cluster is reachable."
	case IsNetworkFailure(err):
		return "The network failed: the connection to the API server broke or timed out before an answer came. " +
			"Reads and dry runs were sent again for up to " + retryBudget.String() + " before giving up; a write " +
			"whose outcome is unknown is settled by reading the object on the next attempt. Check what lies " +
			"between here and the cluster (a proxy, VPN, load balancer or firewall that cuts connections). " +
			"Nothing was decided from this failure; run again when the cluster is reachable: a rerun picks up " +
			"where this one stopped."
	case err != nil && Unreachable(err):
		return "The cluster did not answer as expected (a server error, a timeout or a broken connection). " +
			"Nothing was decided from this answer; run again when the cluster is reachable."
	}
	return ""
}

// noServer reports that nothing listens at the address, or the name does not
// resolve: a wrong host as often as a cluster that is down.
func noServer(err error) bool {
	var dns *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &dns)
}

// untrustedServer reports a TLS handshake that failed because the server's
// certificate did not verify: a wrong CA or host, not a cluster that is down.
func untrustedServer(err error) bool {
	var verify *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	return errors.As(err, &verify) || errors.As(err, &unknownCA) || errors.As(err, &hostname) || errors.As(err, &invalid)
}

// KindGone reports whether the cluster definitely no longer serves gvk: its
// group version is unknown to the server (404), or served without that kind.
// A failed or partial discovery is an error, never "gone", so an aggregated API
// that is briefly down does not make objects drop out of state.
func (c *Client) KindGone(gvk schema.GroupVersionKind) (bool, error) {
	c.mapper.Reset()
	list, err := c.Discovery.ServerResourcesForGroupVersion(gvk.GroupVersion().String())
	if apierrors.IsNotFound(err) {
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
	return true, nil
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
		return fmt.Errorf("the API server's discovery lists no kind of the core group (apiVersion v1), not even "+
			"Namespace, which every API server serves, so it cannot say whether it serves %q: its discovery is "+
			"failing (GET /api answered 404, or something in front of the server answers in its place). Check "+
			"`kubectl get --raw /api` through the same connection. Nothing was decided; run again when discovery "+
			"lists apiVersion v1", gvk.Kind)
	}
	return fmt.Errorf("the cluster does not serve kind %q in apiVersion %q. Kinds of the core group (apiVersion v1) "+
		"come with the API server, and no CustomResourceDefinition can add one: check the spelling and "+
		"capitalisation of kind and apiVersion (kubectl api-resources lists them)", gvk.Kind, gvk.Version)
}

// observe gathers the identities the cluster shows now. kube-root-ca.crt is
// read only when asked for (withRootCA), as it costs a request.
func (c *Client) observe(ctx context.Context, namespace string, withRootCA bool) (observed, error) {
	var o observed
	var err error
	if o.uid, err = c.kubeSystemUID(ctx); err != nil {
		return o, err
	}
	o.anchors, o.noCA = c.identity.handshake.get(), c.identity.why
	if withRootCA {
		if o.rootCA, o.rootNS, err = c.rootCA(ctx, namespace); err != nil {
			return o, err
		}
	}
	return o, nil
}

// ClusterCheck is what CheckCluster concluded.
type ClusterCheck struct {
	// Identity names the cluster the connection reaches, in the form
	// recorded in state: what to record for an object created now. "" when
	// no identity could be established.
	Identity string
	// Unconfirmed, when not empty, says that the check could not be made and
	// what the user loses: a plan shows it as a warning. The check never
	// passes silently.
	Unconfirmed string
	// Seen is every identity the connection established now, when it
	// confirmed the cluster (or named a new one): what Record keeps beside
	// Identity, so that later credentials that cannot read Identity's source
	// can still check another.
	Seen []string
}

// Recorded is what a resource holds of the cluster it acted in: Identity
// (cluster_uid) and Also, the other identities seen when it last acted
// there, from its private state.
type Recorded struct {
	Identity string
	Also     []string
}

// RecordedIn is the identity recorded in cluster_uid with the others that
// private keeps (none for a resource last written before they were kept).
func RecordedIn(ctx context.Context, clusterUID string, private privatestate.Reader) Recorded {
	r := Recorded{Identity: clusterUID}
	if private == nil || clusterUID == "" {
		return r
	}
	seen, _, err := privatestate.Load[[]string](ctx, private, privatestate.ClusterIdentities)
	if err != nil {
		return r // unreadable: the check falls back to cluster_uid alone
	}
	for _, id := range seen {
		if id != clusterUID && id != "" {
			r.Also = append(r.Also, id)
		}
	}
	return r
}

// Record keeps in private, for RecordedIn, the identities of check.Seen that
// state lacks: all but check.Identity, which is cluster_uid. A check that
// confirmed nothing keeps what was there, and so does one that saw nothing
// else (private state keeps only what state lacks).
func Record(ctx context.Context, private privatestate.Writer, check ClusterCheck) diag.Diagnostics {
	if private == nil || check.Unconfirmed != "" {
		return nil
	}
	var others []string
	for _, id := range check.Seen {
		if id != check.Identity {
			others = append(others, id)
		}
	}
	if len(others) == 0 {
		return nil
	}
	return privatestate.Save(ctx, private, privatestate.ClusterIdentities, others)
}

// CheckCluster compares the cluster c reaches with recorded: the identity
// stored when the object was created ("" when none was), and the others seen
// when it was last written. object names the object for messages; namespace
// is where kube-root-ca.crt is looked for when it is needed (the object's
// namespace; "" for default).
//
// It refuses (an *OtherClusterError) only when a recorded identity's source
// is available now and names another cluster. The identity in cluster_uid is
// compared first; when its source is not available now (credentials that may
// not read kube-system, a connection switched to insecure), the others are,
// in their order, so that an object an admin created is still checked under a
// pipeline's namespace-bound account. A fingerprint found in any of the CAs
// the cluster shows now confirms it: during a CA rotation the handshake may
// already use the new CA while kube-root-ca.crt still lists the old one. When
// no recorded source is available, nothing is compared and Unconfirmed says
// so.
func (c *Client) CheckCluster(ctx context.Context, recorded Recorded, object, namespace string) (ClusterCheck, error) {
	if recorded.Identity == "" {
		o, err := c.observe(ctx, namespace, false)
		if err != nil {
			return ClusterCheck{}, err
		}
		if id := o.preferred(); id != "" {
			return ClusterCheck{Identity: id, Seen: c.seenNow(o)}, nil
		}
		if o, err = c.observe(ctx, namespace, true); err != nil {
			return ClusterCheck{}, err
		}
		if id := o.preferred(); id != "" {
			return ClusterCheck{Identity: id, Seen: o.seen()}, nil
		}
		return ClusterCheck{Unconfirmed: noIdentityWarning(object, o)}, nil
	}
	var o observed
	for _, id := range append([]string{recorded.Identity}, recorded.Also...) {
		var confirmed bool
		var err error
		o, confirmed, err = c.compare(ctx, id, object, namespace)
		if err != nil {
			var other *OtherClusterError
			if errors.As(err, &other) && id != recorded.Identity {
				other.Via = recorded.Identity
			}
			return ClusterCheck{}, err
		}
		if confirmed {
			return ClusterCheck{Identity: recorded.Identity, Seen: c.seenNow(o)}, nil
		}
	}
	return ClusterCheck{Identity: recorded.Identity, Unconfirmed: unconfirmedWarning(object, recorded.Identity, o)}, nil
}

// seenNow is o's identities, with kube-root-ca.crt's when this Client has
// read it already: recording costs no request.
func (c *Client) seenNow(o observed) []string {
	if o.rootCA == nil {
		c.identity.mu.Lock()
		o.rootCA = c.identity.rootCA
		c.identity.mu.Unlock()
	}
	return o.seen()
}

// compare checks one recorded identity against what c reaches: confirmed,
// an *OtherClusterError when its source is available and names another
// cluster, or neither when its source is not available now.
func (c *Client) compare(ctx context.Context, recorded, object, namespace string) (observed, bool, error) {
	src := sourceOf(recorded)
	o, err := c.observe(ctx, namespace, false)
	if err != nil {
		return o, false, err
	}
	if src == fromKubeSystem {
		switch {
		case o.uid == recorded:
			return o, true, nil
		case o.uid != "":
			return o, false, &OtherClusterError{Object: object, Recorded: recorded, Reaching: o.uid, Host: c.Host}
		}
		return o, false, nil
	}
	fp := strings.TrimPrefix(strings.TrimPrefix(recorded, tlsCAPrefix), rootCAPrefix)
	if slices.Contains(o.anchors, fp) {
		return o, true, nil
	}
	if o, err = c.observe(ctx, namespace, true); err != nil {
		return o, false, err
	}
	if slices.Contains(o.rootCA, fp) {
		return o, true, nil
	}
	switch {
	case src == fromTLSCA && len(o.anchors) > 0:
		return o, false, &OtherClusterError{Object: object, Recorded: recorded, Reaching: tlsCAPrefix + o.anchors[0], Host: c.Host}
	case src == fromRootCA && len(o.rootCA) > 0:
		return o, false, &OtherClusterError{Object: object, Recorded: recorded, Reaching: rootCAPrefix + o.rootCA[0], Host: c.Host}
	}
	return o, false, nil
}

// describe says in words what an identity is.
func describe(identity string) string {
	switch sourceOf(identity) {
	case fromTLSCA:
		return "the cluster whose API server certificate is signed by the CA with SHA-256 fingerprint " +
			strings.TrimPrefix(identity, tlsCAPrefix)
	case fromRootCA:
		return "the cluster whose ConfigMap kube-root-ca.crt holds the CA with SHA-256 fingerprint " +
			strings.TrimPrefix(identity, rootCAPrefix)
	}
	return "the cluster whose kube-system namespace has UID " + identity
}

// unavailable says why each source of identity is missing now.
func unavailable(o observed) string {
	var why []string
	if o.uid == "" {
		why = append(why, "the credentials may not read namespace kube-system")
	}
	if len(o.anchors) == 0 {
		why = append(why, cmp.Or(o.noCA, "the TLS handshake verified no CA of the connection's own"))
	}
	if o.rootNS != "" && len(o.rootCA) == 0 {
		why = append(why, fmt.Sprintf("ConfigMap %s cannot be read in namespace %s", rootCAConfigMap, o.rootNS))
	}
	return strings.Join(why, "; ")
}

// whatIsLost is the same in every warning: it is why the check exists.
const whatIsLost = "Without an identity to compare, a connection that later reaches another cluster (a switched kubeconfig context, an " +
	"edited kubeconfig file) is not noticed: the object would read as deleted there, leave state, and be " +
	"created in the other cluster."

// howToIdentify lists what lets the provider name the cluster.
const howToIdentify = "Any one of these restores the check: let the credentials get namespace kube-system; set " +
	"cluster_connection.cluster_ca_certificate (or the kubeconfig's certificate-authority-data) instead of " +
	"insecure or plain HTTP; or let them get ConfigMap " + rootCAConfigMap + " in the object's namespace."

func noIdentityWarning(object string, o observed) string {
	return fmt.Sprintf("k8sconnect could not establish which cluster the connection reaches for %s, so none is "+
		"recorded: %s. %s %s", object, unavailable(o), whatIsLost, howToIdentify)
}

func unconfirmedWarning(object, recorded string, o observed) string {
	return fmt.Sprintf("%s was recorded in %s, but that cannot be compared with what the connection reaches "+
		"now: %s. The plan goes on unchecked. %s Restore the credentials or connection it was created "+
		"with, or let the current ones read what identified it.", object, describe(recorded), unavailable(o), whatIsLost)
}

// OtherClusterError is a connection that now reaches a different cluster from
// the one an object was created in.
type OtherClusterError struct {
	Object             string
	Recorded, Reaching string
	Host               string
	// Via is cluster_uid when Recorded is another identity seen with it
	// (the credentials now cannot read cluster_uid's source).
	Via string
}

func (e *OtherClusterError) Error() string {
	msg := fmt.Sprintf("cluster_connection now reaches a different cluster. %s was created in %s, but the "+
		"connection (server %s) reaches %s. k8sconnect neither forgets the object nor plans a create in the "+
		"other cluster. If the kubeconfig context or file was switched by mistake, switch it back.",
		e.Object, describe(e.Recorded), e.Host, describe(e.Reaching))
	if e.Via != "" {
		msg += fmt.Sprintf(" (The object's cluster_uid is %s, which these credentials cannot read; the cluster was "+
			"also recorded as %s when the object was last written, and that is what was compared. If this is the "+
			"same cluster and only its CA changed, one refresh with credentials that may read namespace "+
			"kube-system records the new CA: terraform apply -refresh-only, or pulumi refresh.)", e.Via, e.Recorded)
	}
	if sourceOf(e.Recorded) == fromKubeSystem {
		return msg + " If the object really lives in the new cluster now, remove it from state (terraform " +
			"state rm, tofu state rm or pulumi state delete) and import it there."
	}
	return msg + " The identity was recorded from the cluster's CA because the credentials could not read " +
		"namespace kube-system, so a rotated CA reads the same as another cluster. If this is the same " +
		"cluster and its CA was rotated, or the object really lives in the new cluster now, accept the new " +
		"identity: remove the resource from state (terraform state rm, tofu state rm or pulumi state delete), " +
		"then import it again (k8sconnect_object, k8sconnect_helm_release) or apply again (k8sconnect_patch " +
		"takes its fields again); the new identity is recorded then."
}

// Warn adds Unconfirmed, if any, to diags as a warning. Plans call it; a
// refresh or an apply that follows the plan does not repeat it.
func (k ClusterCheck) Warn(diags *diag.Diagnostics) {
	switch {
	case k.Unconfirmed == "":
	case k.Identity == "":
		diags.AddWarning("No cluster identity: a switched context would go unnoticed", k.Unconfirmed)
	default:
		diags.AddWarning("The cluster could not be confirmed", k.Unconfirmed)
	}
}

// IdentityDescription is the description of the cluster_uid attribute of
// every resource that records the cluster it acts in; acted says what the
// resource did there ("the object was created in").
func IdentityDescription(acted string) string {
	return "The identity of the cluster " + acted + ", recorded at create: the UID of its kube-system namespace " +
		"when the credentials may read it; otherwise `tls-ca-sha256:<fingerprint>`, the CA from the connection's " +
		"own CA bundle that verified the API server's certificate (insecure, plain-HTTP and system-CA connections " +
		"have none); otherwise `kube-root-ca-sha256:<fingerprint>`, the first certificate of ConfigMap " +
		"kube-root-ca.crt in the namespace. When cluster_connection later reaches another cluster (a switched " +
		"context, an edited kubeconfig), plan, refresh and destroy fail naming both instead of acting on the " +
		"other cluster. Empty, with a warning at plan, when none of the three can be read. A CA fingerprint also " +
		"changes when the cluster's CA is rotated; the error then says how to record the new one."
}
