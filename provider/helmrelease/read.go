package helmrelease

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	release "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/handon"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectset"
	"github.com/k8sconnect/k8sconnect/provider/internal/optimeout"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
	"github.com/k8sconnect/k8sconnect/provider/internal/refresh"
)

// Read refreshes objects from the cluster: each object's fields that
// k8sconnect owned after the last apply, with their live values, so what
// someone changed (helm upgrade, rollback, kubectl edit) shows in the next
// plan as drift on our fields; an object deleted outside leaves the map. The
// revision and status are the latest record's. A release without records is
// gone (uninstalled) and leaves the state.
func (r *Resource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state model
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, d := optimeout.Start(ctx, state.Timeouts, optimeout.Read)
	defer cancel()
	resp.Diagnostics.Append(d...)
	defer func() {
		if optimeout.KeepRead(ctx, &resp.Diagnostics, "release "+state.ID.ValueString()) {
			resp.State.Raw = req.State.Raw
		}
	}()
	if state.ClusterConnection.IsNull() && adopting(ctx, req.Private) && (r.clients == nil || !r.clients.HasDefault()) {
		// Moved from hashicorp/helm, whose connection was its own provider's:
		// the plan reads the release through this configuration's.
		return
	}
	c, ok := r.clients.ClientFor(ctx, state.ClusterConnection, &resp.Diagnostics)
	if !ok {
		return
	}
	priv, err := loadPrivate(ctx, req.Private)
	if err != nil {
		resp.Diagnostics.AddError("Could not read private state", err.Error())
		return
	}
	name, ns := state.Name.ValueString(), state.Namespace.ValueString()
	// Before the records are read: in another cluster they are missing, and
	// a missing release leaves state and is installed again, there.
	// As every Read (see package refresh): only a definite answer changes
	// state. Stored credentials that expired, or a cluster that gave no
	// usable answer, keep the state as it was, with a warning; the plan then
	// reads the release with the configuration's connection.
	subject := "release " + state.ID.ValueString()
	cluster, outcome := refresh.Cluster(ctx, c, connection.RecordedIn(ctx, state.ClusterUID.ValueString(), req.Private), resp.Private, subject, ns, &resp.Diagnostics)
	if outcome != refresh.Found {
		return
	}
	if state.ClusterUID.ValueString() == "" {
		state.ClusterUID = types.StringValue(cluster)
	}
	history, err := newRecords(c, ns, 0).history(name)
	if err != nil {
		if !refresh.Unanswered(ctx, err, subject, &resp.Diagnostics) {
			resp.Diagnostics.AddError("Could not read the release records", connection.Explain(err))
		}
		return
	}
	keys := make([]string, 0, len(state.Objects.Elements()))
	for k := range state.Objects.Elements() {
		keys = append(keys, k)
	}
	ignores, _ := objectset.IgnoreRulesOf(ctx, state.IgnoreFields, pathIgnoreFields, &resp.Diagnostics)
	values := make([]attr.Value, len(keys))
	errs := make([]error, len(keys))
	objectset.InParallel(len(keys), func(i int) {
		key := keys[i]
		var live *unstructured.Unstructured
		seen := time.Now()
		values[i], live, errs[i] = readOne(ctx, c, key, priv[key], objectset.OwnedAtApply(ctx, req.Private, key), ignores.FieldsOf(key),
			state.ID.ValueString(), state.Objects.Elements()[key])
		if live != nil {
			recentReads.Remember(c, state.ID.ValueString(), key, handon.Read{Obj: live, Seen: seen})
		}
	})
	for i := range keys {
		if errs[i] != nil && refresh.Unanswered(ctx, errs[i], subject, &resp.Diagnostics) {
			return // one warning for the release; no object of it is changed in state
		}
	}
	elems := map[string]attr.Value{}
	for i, key := range keys {
		if errs[i] != nil {
			resp.Diagnostics.AddError("Could not read an object of the release",
				key+": "+connection.Explain(errs[i]))
			continue
		}
		if values[i] == nil {
			continue
		}
		elems[key] = values[i]
		before := ownership.StateProjection(ctx, objectset.MapOf(state.Objects.Elements()[key]))
		after := ownership.StateProjection(ctx, objectset.MapOf(values[i]))
		resp.Diagnostics.Append(ownership.Refreshed(ctx, privatestate.Of{R: req.Private, W: resp.Private, Object: key}, before, after)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	if len(history) == 0 {
		// Uninstalled (helm uninstall, or its records deleted): what it
		// kept (helm.sh/resource-policy: keep, crds/) stays in the cluster,
		// marked as this release's, and the next apply installs again
		// over it.
		resp.State.RemoveResource(ctx)
		return
	}
	last := history[len(history)-1]
	if !adopting(ctx, req.Private) {
		// An object the latest record lists and state lacks (helm upgrade
		// added it from elsewhere) is the release's too: in objects, so
		// that a plan whose chart lacks it names its deletion.
		if !r.readUnaccounted(ctx, c, last, &state, priv, ignores, elems, resp) {
			return
		}
	}
	state.Objects = types.MapValueMust(objectset.ProjectionType, elems)
	state.Revision = types.Int64Value(int64(last.Version))
	if last.Info != nil {
		state.Status = types.StringValue(last.Info.Status.String())
		state.Notes = types.StringValue(last.Info.Notes)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// readUnaccounted adds to elems, and to the private state, the objects of
// the latest record that state lacks and that carry the release's marks
// (unaccounted), each projected as the refresh projects any object of the
// release. It reports false when an error was reported.
func (r *Resource) readUnaccounted(ctx context.Context, c *connection.Client, last *release.Release, state *model, priv private,
	ignores objectset.IgnoreRules, elems map[string]attr.Value, resp *resource.ReadResponse) bool {
	known := mergedPrivate(priv, nil)
	for key := range state.Objects.Elements() {
		if _, ok := known[key]; !ok {
			known[key] = privateObject{}
		}
	}
	more, err := unaccounted(ctx, c, last, known, state.Namespace.ValueString(), state.Name.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("Could not read the objects of the release's record", connection.Explain(err))
		return false
	}
	if len(more) == 0 {
		return true
	}
	for key, o := range more {
		value, _, err := readOne(ctx, c, key, o, nil, ignores.FieldsOf(key), state.ID.ValueString(), nil)
		if err != nil {
			resp.Diagnostics.AddError("Could not read an object of the release", key+": "+connection.Explain(err))
			return false
		}
		if value != nil {
			elems[key] = value
			priv[key] = o
		}
	}
	resp.Diagnostics.Append(priv.save(ctx, resp.Private)...)
	return !resp.Diagnostics.HasError()
}

// readOne is one object's refreshed projection; nil when it is gone.
func readOne(ctx context.Context, c *connection.Client, key string, o privateObject, owned *fieldpath.Set,
	ignored []objectpath.Path, id string, recorded attr.Value) (attr.Value, *unstructured.Unstructured, error) {
	if o.APIVersion == "" {
		return recorded, nil, nil // nothing known to read it by (state from an import): left as it is
	}
	ident, err := identityOf(key, o)
	if err != nil {
		return nil, nil, err
	}
	return objectset.Refreshed(ctx, c, ident, owned, helmMarks, ignored, o.redactor(id))
}
