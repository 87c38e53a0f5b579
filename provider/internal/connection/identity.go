package connection

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// clusterIdentity caches the answer of ClusterUID for the life of a Client.
type clusterIdentity struct {
	mu  sync.Mutex
	uid string
	ok  bool
}

// ClusterUID names the cluster this client reaches: the UID of its kube-system
// namespace, which is created once with the cluster and never changes. A
// kubeconfig can point at another cluster under the same server name (a new
// cluster behind an old DNS name, a switched context), so the server address
// cannot tell clusters apart; this UID can.
//
// When the credentials may not read kube-system (403), the cluster cannot be
// named and ClusterUID returns "" without an error: callers then skip the
// comparison rather than refuse every plan. Any other failure is an error and
// is not cached, so a later call tries again.
func (c *Client) ClusterUID(ctx context.Context) (string, error) {
	c.identity.mu.Lock()
	defer c.identity.mu.Unlock()
	if c.identity.ok {
		return c.identity.uid, nil
	}
	ns, err := c.Dynamic.Resource(namespaces).Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	switch {
	case apierrors.IsForbidden(err) || apierrors.IsNotFound(err):
		c.identity.uid, c.identity.ok = "", true
	case err != nil:
		return "", fmt.Errorf("identifying the cluster (reading namespace kube-system): %w", err)
	default:
		c.identity.uid, c.identity.ok = string(ns.GetUID()), true
	}
	return c.identity.uid, nil
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
// is a typo that can be refused at plan. Nil for anything else, including a
// discovery that failed.
func (c *Client) MissingCoreKind(gvk schema.GroupVersionKind) error {
	if gvk.Group != "" {
		return nil
	}
	if _, err := c.Mapping(gvk); !meta.IsNoMatchError(err) {
		return nil
	}
	return fmt.Errorf("the cluster does not serve kind %q in apiVersion %q. Kinds of the core group (apiVersion v1) "+
		"come with the API server, and no CustomResourceDefinition can add one: check the spelling and "+
		"capitalisation of kind and apiVersion (kubectl api-resources lists them)", gvk.Kind, gvk.Version)
}

// OtherClusterError is a connection that now reaches a different cluster from
// the one an object was created in.
type OtherClusterError struct {
	Object             string
	Recorded, Reaching string
	Host               string
}

func (e *OtherClusterError) Error() string {
	return fmt.Sprintf("cluster_connection now reaches a different cluster. %s was created in the cluster whose "+
		"kube-system namespace has UID %s, but the connection (server %s) reaches the cluster whose kube-system "+
		"namespace has UID %s. k8sconnect neither forgets the object nor plans a create in the other cluster. "+
		"If the kubeconfig context or file was switched by mistake, switch it back. If the object really lives "+
		"in the new cluster now, remove it from state (terraform state rm, tofu state rm or pulumi state delete) "+
		"and import it there.", e.Object, e.Recorded, e.Host, e.Reaching)
}

// CheckCluster compares the cluster c reaches with recorded, the identity
// stored when the object was created. It returns the identity c reaches
// ("" when it cannot be read), and an *OtherClusterError when they differ.
func (c *Client) CheckCluster(ctx context.Context, recorded, object string) (string, error) {
	now, err := c.ClusterUID(ctx)
	if err != nil {
		return "", err
	}
	if recorded != "" && now != "" && recorded != now {
		return now, &OtherClusterError{Object: object, Recorded: recorded, Reaching: now, Host: c.Host}
	}
	return now, nil
}
