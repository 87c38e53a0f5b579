package connection

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/k8sconnect/k8sconnect/provider/internal/scope"
)

// Client is everything a resource needs to talk to one cluster.
type Client struct {
	// Host is the API server's address, for messages.
	Host string
	// Config is the REST configuration the clients were built from, for a
	// library that builds clients of its own (Helm's template engine, for
	// lookup). Copy it before changing it.
	Config  *rest.Config
	Dynamic dynamic.Interface
	// Metadata reads objects' metadata alone: what a wait for a deletion
	// needs, a few hundred bytes where a large CRD is 850 KB.
	Metadata  metadata.Interface
	Discovery discovery.CachedDiscoveryInterface
	mapper    *restmapper.DeferredDiscoveryRESTMapper
	// established are the kinds of CRDs seen Established that discovery may
	// not list yet.
	established establishedKinds
	identity    clusterIdentity
	missing     missingNamespaces
	// pin is the connection's cluster_id, "" when it sets none.
	pin string
}

// Mapping resolves a kind to its resource and scope. Discovery is cached for the
// life of the provider process; a miss takes the kind of a CRD seen
// Established (LearnEstablished), or else resets discovery once, so a CRD
// created earlier in the same apply is found.
func (c *Client) Mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil && meta.IsNoMatchError(err) {
		if learned := c.establishedMapping(gvk); learned != nil {
			return learned, nil
		}
		c.mapper.Reset()
		m, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	return m, err
}

// Discovered reports whether discovery, as this process last fetched it,
// lists gvk, or a CRD seen Established defines it (or discovery failed); it
// never fetches discovery again on a miss. For a plan to tell that a kind a
// CRD of the same apply defines is not served yet: Mapping would fetch
// discovery anew for each such kind, two requests in turn, to learn what
// the plan already knows.
func (c *Client) Discovered(gvk schema.GroupVersionKind) bool {
	_, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	// Only an answer without the kind says no: a discovery that failed is
	// for the caller's own request to meet and report.
	return !meta.IsNoMatchError(err) || c.establishedMapping(gvk) != nil
}

// mappingWithin is Mapping, given up when ctx's deadline passes first:
// discovery takes no context, and its requests are bounded by the
// request's budget alone, which may end after the operation's deadline (a
// timeouts block). The discovery goes on in the background, for the next
// caller.
func (c *Client) mappingWithin(ctx context.Context, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	if _, ok := ctx.Deadline(); !ok {
		return c.Mapping(gvk)
	}
	type answer struct {
		m   *meta.RESTMapping
		err error
	}
	got := make(chan answer, 1)
	go func() {
		m, err := c.Mapping(gvk)
		got <- answer{m, err}
	}()
	select {
	case a := <-got:
		return a.m, a.err
	case <-ctx.Done():
		return nil, fmt.Errorf("looking up kind %s: %w", gvk.Kind, context.Cause(ctx))
	}
}

// Namespaced tells whether kind gk is namespaced in this cluster; known is
// false when the cluster does not serve it. It answers the data sources'
// scope questions (yamldocs.ScopeFinder).
func (c *Client) Namespaced(gk schema.GroupKind) (namespaced, known bool, err error) {
	// No version: scope is the same in every version, and the version a
	// document names may not be served yet while the kind is.
	m, err := c.Mapping(gk.WithVersion(""))
	if meta.IsNoMatchError(err) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	return scope.Namespaced(m), true, nil
}

// Get reads one object by its identity (the kind mapped through discovery).
// A 404 is a NotFound only when it is the server's word on the object
// (NotFoundVerdict).
func (c *Client) Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	m, err := c.mappingWithin(ctx, gvk)
	if err != nil {
		return nil, err
	}
	obj, err := c.Resource(m, namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, c.NotFoundVerdict(err, gvk, objectName(gvk, namespace, name), name)
	}
	return obj, nil
}

// objectName names an object in errors: "v1/ConfigMap ns/name".
func objectName(gvk schema.GroupVersionKind, namespace, name string) string {
	if namespace == "" {
		return gvk.GroupVersion().String() + "/" + gvk.Kind + " " + name
	}
	return gvk.GroupVersion().String() + "/" + gvk.Kind + " " + namespace + "/" + name
}

// GetMetadata reads one object's metadata alone, as an object of its own
// kind with nothing but apiVersion, kind and metadata.
func (c *Client) GetMetadata(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	m, err := c.mappingWithin(ctx, gvk)
	if err != nil {
		return nil, err
	}
	ri := c.Metadata.Resource(m.Resource)
	var got *metav1.PartialObjectMetadata
	if scope.Namespaced(m) {
		got, err = ri.Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	} else {
		got, err = ri.Get(ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		return nil, c.NotFoundVerdict(err, gvk, objectName(gvk, namespace, name), name)
	}
	fields, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&got.ObjectMeta)
	if err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"metadata": fields}}
	obj.SetGroupVersionKind(gvk)
	return obj, nil
}

// Resource returns the dynamic client for a mapped kind in one namespace
// (ignored for cluster-scoped kinds).
func (c *Client) Resource(m *meta.RESTMapping, namespace string) dynamic.ResourceInterface {
	if scope.Namespaced(m) {
		return c.Dynamic.Resource(m.Resource).Namespace(namespace)
	}
	return c.Dynamic.Resource(m.Resource)
}

// Cache holds one Client per distinct connection for the life of the provider
// process, so a plan of many objects on one cluster discovers the API once.
type Cache struct {
	mu      sync.Mutex
	clients map[string]*Client
	// WrapTransport, when set, wraps every client's transport; tests use it to
	// count requests and to inject faults.
	WrapTransport func(http.RoundTripper) http.RoundTripper

	// def is the provider block's cluster_connection, used by resources
	// that have none; defState says whether it is set, unknown or absent.
	def      Model
	defState defaultState
}

type defaultState int

const (
	noDefault defaultState = iota
	defaultKnown
	defaultUnknown
)

// ErrNoConnection: a resource has no cluster_connection and the provider
// block sets none.
var ErrNoConnection = errors.New("no cluster_connection: set one on this resource, or a default one in the provider block " +
	"(provider \"k8sconnect\" { cluster_connection = { kubeconfig_file = \"~/.kube/config\" } })")

// ErrDefaultUnknown: the provider block's cluster_connection depends on
// something not created yet.
var ErrDefaultUnknown = errors.New("the provider block's cluster_connection is not known until apply (it refers to " +
	"something created in this run); give the resources that depend on it their own cluster_connection")

// SetDefault records the provider block's cluster_connection (a null value:
// none). The provider calls it in Configure.
func (c *Cache) SetDefault(ctx context.Context, conn types.Object) diag.Diagnostics {
	m, known, diags := FromObject(ctx, conn)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case conn.IsNull():
		c.def, c.defState = Model{}, noDefault
	case !known:
		c.def, c.defState = Model{}, defaultUnknown
	default:
		c.def, c.defState = m, defaultKnown
	}
	return diags
}

// HasDefault reports whether the provider block sets a cluster_connection.
func (c *Cache) HasDefault() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.defState != noDefault
}

// isEmpty: no attribute is set, which is how a resource without
// cluster_connection reaches Client.
func (m Model) isEmpty() bool {
	return m.Host.IsNull() && m.ClusterCACertificate.IsNull() && m.Token.IsNull() && m.ClientCertificate.IsNull() &&
		m.ClientKey.IsNull() && m.Insecure.IsNull() && m.Kubeconfig.IsNull() && m.KubeconfigFile.IsNull() &&
		m.Context.IsNull() && m.ProxyURL.IsNull() && m.Exec.IsNull() && m.RequestTimeout.IsNull() &&
		m.ClusterID.IsNull()
}

// resolve replaces an empty connection with the provider's default.
func (c *Cache) resolve(m Model) (Model, error) {
	if !m.isEmpty() {
		return m, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.defState {
	case defaultKnown:
		return c.def, nil
	case defaultUnknown:
		return m, ErrDefaultUnknown
	}
	return m, ErrNoConnection
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{clients: map[string]*Client{}} }

// Client returns the cached client for m, building it on first use.
//
// An empty m (a resource without cluster_connection) is the provider's default.
func (c *Cache) Client(ctx context.Context, m Model) (*Client, error) {
	m, err := c.resolve(m)
	if err != nil {
		return nil, err
	}
	src, err := m.kubeconfig()
	if err != nil {
		return nil, err
	}
	key := m.cacheKey(src)
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.clients[key]; ok {
		return cl, nil
	}
	cfg, err := m.restConfig(ctx, src)
	if err != nil {
		return nil, err
	}
	budget, err := m.Budget()
	if err != nil {
		return nil, err
	}
	handshake, noCA := handshakeFor(cfg)
	if handshake != nil {
		cfg.Wrap(handshake.wrap)
	}
	if c.WrapTransport != nil {
		cfg.Wrap(c.WrapTransport)
	}
	if w := requestLogWrapper(); w != nil {
		cfg.Wrap(w)
	}
	// Outermost, so the request log and the test wrappers see every attempt
	// on the wire. One wrapper for every client built from cfg (and the
	// copies Helm builds its own from), so that they share what they learn
	// of the connection.
	cfg.Wrap(retryNetworkFailures(budget))
	cfg.WarningHandlerWithContext = serverWarnings{}
	cl, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	cl.identity.handshake, cl.identity.why = handshake, noCA
	cl.pin = m.ClusterID.ValueString()
	c.clients[key] = cl
	return cl, nil
}

func newClient(cfg *rest.Config) (*Client, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building Kubernetes client: %w", err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building discovery client: %w", err)
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building metadata client: %w", err)
	}
	cached := memory.NewMemCacheClient(disco)
	return &Client{Host: cfg.Host, Config: rest.CopyConfig(cfg), Dynamic: dyn, Metadata: meta, Discovery: cached,
		mapper: restmapper.NewDeferredDiscoveryRESTMapper(cached)}, nil
}

// cacheKey hashes every field, so credentials are compared without being kept
// in a readable map key. A kubeconfig file counts by its content as well as its
// path: a file rewritten with new credentials must get a new client.
func (m Model) cacheKey(src *kubeconfigSource) string {
	var fileContent string
	if src != nil && src.path != "" {
		fileContent = string(src.content)
	}
	h := sha256.New()
	for _, s := range []string{
		m.Host.String(), m.ClusterCACertificate.String(), m.Token.String(),
		m.ClientCertificate.String(), m.ClientKey.String(), m.Insecure.String(),
		m.Kubeconfig.String(), m.KubeconfigFile.String(), fileContent,
		m.Context.String(), m.ProxyURL.String(), m.Exec.String(), m.RequestTimeout.String(),
		m.ClusterID.String(),
	} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func parseProxyURL(s string) (func(*http.Request) (*url.URL, error), error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		// The URL may carry credentials, so it is not quoted back.
		return nil, fmt.Errorf("cluster_connection.proxy_url is not a URL such as http://proxy:3128")
	}
	switch u.Scheme {
	case "http", "https", "socks5":
	default:
		return nil, fmt.Errorf("cluster_connection.proxy_url scheme %q is not supported; use http, https or socks5", u.Scheme)
	}
	return http.ProxyURL(u), nil
}

// ClientFor is what a resource calls at apply or read time: the cached client
// for a cluster_connection value, or false with an error in diags when it is
// unknown or invalid (attached to no attribute: see ReportClientError).
func (c *Cache) ClientFor(ctx context.Context, conn types.Object, diags *diag.Diagnostics) (*Client, bool) {
	m, known, d := FromObject(ctx, conn)
	diags.Append(d...)
	if diags.HasError() {
		return nil, false
	}
	if !known {
		ReportUnknownConnection(diags, "The connection is not known yet at apply time.")
		return nil, false
	}
	if c == nil {
		diags.AddError("Provider not configured", "No client cache was configured; this is a bug in the provider.")
		return nil, false
	}
	cl, err := c.Client(ctx, m)
	if err != nil {
		ReportClientError(diags, err)
		return nil, false
	}
	return cl, true
}
