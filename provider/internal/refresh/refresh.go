// Package refresh is the one reading of an object that a resource holds in
// state, as every resource's Read does it: confirm the cluster, read the
// object, and decide from the answer whether the object is there, definitely
// gone, or unknown for now.
//
// The rule it keeps is that only a definite answer takes a resource out of
// state: NotFound, or a kind the cluster no longer serves. Refused credentials,
// a failed discovery, a server error or a broken connection keep the state as
// it was and say so in a warning, so an outage never turns into a plan that
// re-creates what already exists. Each resource then does its own part with
// the object it found (project it, record it).
package refresh

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/optimeout"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
)

// Outcome is what a Read may conclude.
type Outcome int

const (
	// Found: Result.Live holds the object.
	Found Outcome = iota
	// Gone: the cluster said for certain that the object, or its kind, no
	// longer exists. The resource leaves state.
	Gone
	// Kept: the cluster could not tell (it did not answer, failed, or its
	// discovery failed). A warning says so; state stays as it was.
	Kept
	// CredentialsRefused: the server refused the credentials stored in state
	// (see connection.StaleCredentials, which warned). State stays; the plan
	// reads the object with the configuration's connection.
	CredentialsRefused
	// Failed: an error diagnostic says what went wrong (another cluster, or an
	// answer no Read should get).
	Failed
)

// Result is what Object learned.
type Result struct {
	Outcome Outcome
	// Live is the object, when Outcome is Found.
	Live *unstructured.Unstructured
	// Cluster is the identity of the cluster the connection reaches (see
	// connection.Client.CheckCluster), once the check has passed: the one
	// recorded, or, when none was, the one to record ("" when none can be
	// established). The plan warns when it is unconfirmed; a refresh does not
	// repeat it.
	Cluster string
	// Seen is when the object was asked for.
	Seen time.Time
	// Asked: the cluster check passed and the object was asked for, whatever
	// the answer; the stored credentials were not refused by the check.
	Asked bool
}

// Object confirms that c reaches the cluster recorded in state (recorded;
// its Identity "" when none was recorded), keeping what it saw in private,
// then reads id. subject names what is refreshed in the warning that keeps
// state, such as "the patch of <object>".
func Object(ctx context.Context, c *connection.Client, recorded connection.Recorded, private privatestate.Writer, id manifest.Identity, subject string, diags *diag.Diagnostics) Result {
	var r Result
	keep := func(err error) Result {
		warnKept(ctx, err, subject, diags)
		r.Live, r.Outcome = nil, Kept
		return r
	}
	cluster, outcome := checkCluster(ctx, c, recorded, private, id.String(), id.Namespace, subject, diags)
	if outcome != Found {
		return Result{Outcome: outcome}
	}
	r.Cluster, r.Seen, r.Asked = cluster, time.Now(), true
	var err error
	r.Live, err = c.Get(ctx, id.GVK(), id.Namespace, id.Name)
	switch {
	case err == nil:
		r.Outcome = Found
		return r
	case connection.StaleCredentials(err, id.String(), diags):
		r.Outcome = CredentialsRefused
	case connection.Gone(err, id.Name):
		r.Outcome = Gone
	case apierrors.IsNotFound(err):
		// A 404 that is not the server's word on the object (a proxy's
		// page): no verdict, so the object stays in state.
		return keep(err)
	case meta.IsNoMatchError(err):
		// The kind is missing from the client's discovery; only a fresh
		// discovery without it says that the kind is really gone.
		if gone, derr := c.KindGone(id.GVK()); !gone {
			return keep(cmp.Or(derr, err))
		}
		r.Outcome = Gone
	case connection.Unreachable(err):
		return keep(err)
	default:
		diags.AddError("Read failed", fmt.Sprintf("Reading %s: %v", id, err))
		r.Outcome = Failed
	}
	r.Live = nil
	return r
}

// Cluster is Object's first step for a Read that holds more than one object
// (a Helm release, whose Read goes on to its records and every object): it
// confirms that c reaches the cluster recorded in state, as Object does. The outcome is Found,
// with the cluster's identity, when it does; Failed when c reaches another
// cluster (an error says so); CredentialsRefused or Kept when the check could
// not be made (a warning says so, and the Read keeps state as it was). what
// names the release in messages; namespace is where kube-root-ca.crt is
// looked for when it is needed.
func Cluster(ctx context.Context, c *connection.Client, recorded connection.Recorded, private privatestate.Writer, what, namespace string, diags *diag.Diagnostics) (string, Outcome) {
	return checkCluster(ctx, c, recorded, private, what, namespace, what, diags)
}

// checkCluster keeps, when the check passes, every identity it saw
// (connection.Record), so that an admin's refresh lets a later account that
// cannot read cluster_uid's source check another.
func checkCluster(ctx context.Context, c *connection.Client, recorded connection.Recorded, private privatestate.Writer, what, namespace, subject string, diags *diag.Diagnostics) (string, Outcome) {
	cluster, err := c.ConfirmCluster(ctx, recorded, what, namespace)
	var other *connection.OtherClusterError
	var unconfirmed *connection.UnconfirmedError
	var pinned *connection.PinMismatchError
	switch {
	case err == nil:
		cluster.WarnChanged(diags)
		diags.Append(connection.Record(ctx, private, cluster)...)
		return cluster.Identity, Found
	case errors.As(err, &pinned):
		diags.AddError("cluster_id differs from the one recorded", err.Error())
		return "", Failed
	case errors.As(err, &unconfirmed):
		diags.AddWarning("Could not refresh "+subject+"; state kept as it was", "The cluster could not be confirmed. "+err.Error())
		return "", Kept
	case errors.As(err, &other):
		diags.AddError("The connection reaches another cluster", err.Error())
		return "", Failed
	case connection.StaleCredentials(err, what, diags):
		return "", CredentialsRefused
	}
	warnKept(ctx, err, subject, diags)
	return "", Kept
}

// Unanswered reports, having warned, an error of a Read after the cluster
// check that is no verdict on what was read: the stored credentials refused,
// or no usable answer (none at all, a timeout, a 403, a 429 or a server
// error). The Read keeps state as it was. Any other error is the caller's to
// report.
func Unanswered(ctx context.Context, err error, subject string, diags *diag.Diagnostics) bool {
	if connection.StaleCredentials(err, subject, diags) {
		return true
	}
	if !connection.Unreachable(err) {
		return false
	}
	warnKept(ctx, err, subject, diags)
	return true
}

// warnKept warns that the refresh of subject keeps state as it was; when
// ctx's deadline, timeouts.read, is what ended it, the warning says so.
func warnKept(ctx context.Context, err error, subject string, diags *diag.Diagnostics) {
	detail := connection.Explain(err)
	if e := optimeout.Ran(ctx); e != nil {
		detail = e.While("refreshing "+subject) + ".\n\n" + err.Error()
	}
	diags.AddWarning("Could not refresh "+subject+"; state kept as it was", detail)
}
