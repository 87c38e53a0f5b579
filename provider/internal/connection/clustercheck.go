package connection

import (
	"cmp"
	"context"
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
	// Changed, when not empty, says that the cluster was confirmed by its
	// kube-system UID while a CA recorded beside it is no longer shown (a
	// rotated CA, a new front proxy): a warning, as the new CA is recorded.
	Changed string
	// Seen is every identity the connection established now: what Record
	// keeps beside Identity, so that later credentials that cannot read
	// Identity's source can still check another.
	Seen []string
	// Pin is the connection's cluster_id ("" when it sets none): what Record
	// keeps, so that a later run under another cluster_id is refused.
	Pin string
}

// Recorded is what a resource holds of the cluster it acted in: Identity
// (cluster_uid), Also, the other identities seen when it last acted there,
// and Pin, the cluster_id it was last confirmed under, both from its
// private state.
type Recorded struct {
	Identity string
	Also     []string
	Pin      string
}

// identities is Identity, then Also, without repeats.
func (r Recorded) identities() []string {
	var ids []string
	for _, id := range append([]string{r.Identity}, r.Also...) {
		if id != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// RecordedIn is the identity recorded in cluster_uid with the others that
// private keeps (none for a resource last written before they were kept),
// and the cluster_id it keeps.
func RecordedIn(ctx context.Context, clusterUID string, private privatestate.Reader) Recorded {
	r := Recorded{Identity: clusterUID}
	if private == nil {
		return r
	}
	if pin, _, err := privatestate.Load[string](ctx, private, privatestate.ClusterPin); err == nil {
		r.Pin = pin
	}
	if clusterUID == "" {
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
// else (private state keeps only what state lacks). The pin is the
// connection's now when the check confirmed the cluster, or when nothing
// else names it (no identity at all): a cluster_id removed from the
// configuration is forgotten then.
func Record(ctx context.Context, private privatestate.Writer, check ClusterCheck) diag.Diagnostics {
	if private == nil {
		return nil
	}
	var diags diag.Diagnostics
	if check.Unconfirmed == "" || check.Identity == "" {
		if check.Pin == "" {
			diags.Append(private.SetKey(ctx, privatestate.ClusterPin, nil)...)
		} else {
			diags.Append(privatestate.Save(ctx, private, privatestate.ClusterPin, check.Pin)...)
		}
	}
	if check.Unconfirmed != "" {
		return diags
	}
	var others []string
	for _, id := range check.Seen {
		if id != check.Identity {
			others = append(others, id)
		}
	}
	if len(others) == 0 {
		return diags
	}
	return append(diags, privatestate.Save(ctx, private, privatestate.ClusterIdentities, others)...)
}

// CheckCluster compares the cluster c reaches with recorded: the identity
// stored when the object was created ("" when none was), the others seen
// when it was last written, and the cluster_id it was last confirmed under.
// object names the object for messages; namespace is where kube-root-ca.crt
// is looked for (the object's namespace; "" for default).
//
// A recorded cluster_id that the connection's cluster_id contradicts is
// refused first (a *PinMismatchError), before any request. Then every
// recorded identity whose source the connection can read now is compared,
// not only the first: one that names another cluster refuses (an
// *OtherClusterError naming it), so that two clusters behind one front CA are
// told apart by their kube-root-ca.crt even under credentials that may not
// read kube-system. A fingerprint found in any of the CAs the cluster shows
// now confirms a CA identity: during a CA rotation the handshake may already
// use the new CA while kube-root-ca.crt still lists the old one. Only the
// kube-system UID outranks the others: unique per cluster and unchanged by
// any CA, a UID that confirms the cluster makes a CA that changed a warning
// (Changed), not a refusal. When no recorded source is available, nothing is
// compared and Unconfirmed says so.
func (c *Client) CheckCluster(ctx context.Context, recorded Recorded, object, namespace string) (ClusterCheck, error) {
	if recorded.Pin != "" && c.pin != "" && recorded.Pin != c.pin {
		return ClusterCheck{}, &PinMismatchError{Object: object, Recorded: recorded.Pin, Configured: c.pin}
	}
	o, err := c.observe(ctx, namespace)
	if err != nil {
		return ClusterCheck{}, err
	}
	check := ClusterCheck{Identity: recorded.Identity, Seen: o.seen(), Pin: c.pin}
	ids := recorded.identities()
	if len(ids) == 0 {
		if check.Identity = o.preferred(); check.Identity == "" {
			check.Unconfirmed = noIdentityWarning(object, o)
		}
		return check, nil
	}
	v := o.compare(ids)
	switch {
	case len(v.differ) > 0 && !v.byUID:
		other := &OtherClusterError{Object: object, Recorded: v.differ[0].recorded, Reaching: v.differ[0].reaching, Host: c.Host}
		if other.Recorded != recorded.Identity {
			other.Via = recorded.Identity
		}
		return ClusterCheck{}, other
	case len(v.differ) > 0:
		check.Changed = changedWarning(object, v.differ)
	case v.confirmed == 0:
		check.Unconfirmed = unconfirmedWarning(object, recorded.Identity, o)
	}
	return check, nil
}

// difference is a recorded identity whose source names another value now.
type difference struct{ recorded, reaching string }

// verdict is what o says of each recorded identity.
type verdict struct {
	confirmed int          // how many the cluster shows now
	byUID     bool         // one of them is kube-system's UID
	differ    []difference // readable now, and naming another value
}

// compare judges each recorded identity against o, in order. A source that
// cannot be read now neither confirms nor refutes.
func (o observed) compare(ids []string) verdict {
	var v verdict
	for _, id := range ids {
		reaching, readable, match := o.judge(id)
		switch {
		case match:
			v.confirmed++
			v.byUID = v.byUID || sourceOf(id) == fromKubeSystem
		case readable:
			v.differ = append(v.differ, difference{id, reaching})
		}
	}
	return v
}

// judge compares one recorded identity with what o shows of its source:
// whether that source can be read now, whether it matches, and what it
// names instead. A CA fingerprint matches when it is any CA the cluster shows
// now (the handshake's or kube-root-ca.crt's), for a rotation in progress;
// but only a CA of its own source refutes it: a CA and a UID, or the
// handshake's CA and kube-root-ca.crt's, say nothing about each other.
func (o observed) judge(id string) (reaching string, readable, match bool) {
	src := sourceOf(id)
	if src == fromKubeSystem {
		return o.uid, o.uid != "", o.uid == id
	}
	fp := strings.TrimPrefix(strings.TrimPrefix(id, tlsCAPrefix), rootCAPrefix)
	match = slices.Contains(o.anchors, fp) || slices.Contains(o.rootCA, fp)
	switch {
	case src == fromTLSCA && len(o.anchors) > 0:
		return tlsCAPrefix + o.anchors[0], true, match
	case src == fromRootCA && len(o.rootCA) > 0:
		return rootCAPrefix + o.rootCA[0], true, match
	}
	return "", match, match
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

func changedWarning(object string, differ []difference) string {
	var what []string
	for _, d := range differ {
		what = append(what, fmt.Sprintf("it was recorded as %s and is now %s", describe(d.recorded), describe(d.reaching)))
	}
	return fmt.Sprintf("The cluster of %s was confirmed by the UID of its kube-system namespace, but %s. Its CA was "+
		"rotated, or the connection now reaches it through a proxy with a CA of its own; the UID, unique to each "+
		"cluster, decides, and what the cluster shows now is recorded at the next apply or refresh. If neither "+
		"happened, this may be a cluster restored from a backup of the other one: check the connection before "+
		"applying.", object, strings.Join(what, "; "))
}

// PinMismatchError is a connection whose cluster_id contradicts the one an
// object was last confirmed under. It is decided before any request.
type PinMismatchError struct {
	Object               string
	Recorded, Configured string
}

func (e *PinMismatchError) Error() string {
	return fmt.Sprintf("cluster_connection.cluster_id is %q, but %s was last confirmed in the cluster pinned as %q. "+
		"k8sconnect does not move a resource to another cluster because cluster_id changed, and reads and writes "+
		"nothing through this connection. If cluster_id, or the connection with it, was changed by mistake, set "+
		"cluster_id back to %q. If the object really is managed in the cluster %q now, remove it from state "+
		"(terraform state rm, tofu state rm or pulumi state delete) and import it there. To rename the pin of the "+
		"same cluster, remove cluster_id, run one refresh (terraform apply -refresh-only, or pulumi refresh), "+
		"then set the new name.", e.Configured, e.Object, e.Recorded, e.Recorded, e.Configured)
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
		msg += fmt.Sprintf(" (The object's cluster_uid is %s; the cluster was also recorded as %s when the object "+
			"was last written, and that is what names another cluster now: every identity the connection can read "+
			"must match. If this is the same cluster and only its CA changed, one refresh with credentials that may "+
			"read namespace kube-system records the new CA: terraform apply -refresh-only, or pulumi refresh.)",
			e.Via, e.Recorded)
	}
	if sourceOf(e.Recorded) == fromKubeSystem {
		return msg + " If the object really lives in the new cluster now, remove it from state (terraform " +
			"state rm, tofu state rm or pulumi state delete) and import it there."
	}
	return msg + " A CA names a cluster only until the CA is rotated: a rotated CA reads the same as another " +
		"cluster. If this is the same " +
		"cluster and its CA was rotated, or the object really lives in the new cluster now, accept the new " +
		"identity: remove the resource from state (terraform state rm, tofu state rm or pulumi state delete), " +
		"then import it again (k8sconnect_object, k8sconnect_helm_release) or apply again (k8sconnect_patch " +
		"takes its fields again); the new identity is recorded then."
}

// Warn adds Unconfirmed and Changed, if any, to diags as warnings. Plans
// call it; a refresh or an apply that follows the plan does not repeat
// Unconfirmed.
func (k ClusterCheck) Warn(diags *diag.Diagnostics) {
	k.WarnChanged(diags)
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
		"kube-root-ca.crt in the namespace. Every one of the three the connection can read is kept beside it, and " +
		"each that can be read again must match: clusters behind one front CA are told apart by their " +
		"kube-root-ca.crt. When cluster_connection later reaches another cluster (a switched context, an edited " +
		"kubeconfig), plan, refresh and destroy fail naming both instead of acting on the other cluster. Empty, with a warning at plan, when none of the three can be read. A CA fingerprint also " +
		"changes when the cluster's CA is rotated; the error then says how to record the new one."
}

// WarnChanged adds Changed, if any, to diags as a warning. A refresh calls
// it: it records what the cluster shows now, so the plan after it has
// nothing left to say.
func (k ClusterCheck) WarnChanged(diags *diag.Diagnostics) {
	if k.Changed != "" {
		diags.AddWarning("The cluster's CA changed", k.Changed)
	}
}
