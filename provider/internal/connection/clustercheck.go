package connection

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
)

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

// UnconfirmedError is a recorded identity that nothing the connection can
// read now confirms or refutes (credentials that may not read its source, a
// connection switched to insecure or to the system's CAs): ConfirmCluster's
// refusal to act on a cluster it cannot confirm.
type UnconfirmedError struct{ Detail string }

func (e *UnconfirmedError) Error() string { return e.Detail }

// ConfirmCluster is CheckCluster for what must not act on a cluster it
// cannot confirm: a refresh, which would read a NotFound there as the object
// gone and drop it from state; a destroy; an apply to an object that exists.
// A recorded identity that cannot be checked now is an *UnconfirmedError,
// not a warning. A resource that recorded none (no source was readable when
// it was created) is checked as CheckCluster checks it: there is nothing to
// confirm.
func (c *Client) ConfirmCluster(ctx context.Context, recorded Recorded, object, namespace string) (ClusterCheck, error) {
	check, err := c.CheckCluster(ctx, recorded, object, namespace)
	if err == nil && check.Unconfirmed != "" && recorded.Identity != "" {
		return check, &UnconfirmedError{Detail: check.Unconfirmed}
	}
	return check, err
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
		"now: %s. k8sconnect does not act on a cluster it cannot confirm: a refresh keeps state as it was, and "+
		"an apply to the existing object or a destroy is refused, so that an object is never read as deleted, "+
		"dropped or made again in another cluster. Restore the credentials or connection it was created "+
		"with, or let the current ones read what identified it (one refresh with credentials that may read "+
		"namespace kube-system records the cluster's other identities too).", object, describe(recorded), unavailable(o))
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
