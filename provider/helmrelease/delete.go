package helmrelease

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	release "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/durations"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectset"
	"github.com/k8sconnect/k8sconnect/provider/internal/optimeout"
	"github.com/k8sconnect/k8sconnect/provider/internal/yamldocs"
)

// Delete uninstalls the release as helm uninstall does: pre-delete hooks,
// the objects in uninstall order (keeping those marked
// helm.sh/resource-policy: keep), post-delete hooks, then every record.
// The hooks are those of the latest record, as helm runs them.
func (r *Resource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state model
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, d := optimeout.Start(ctx, state.Timeouts, optimeout.Delete)
	defer cancel()
	resp.Diagnostics.Append(d...)
	defer optimeout.Finish(ctx, &resp.Diagnostics, "The release stays in state; the next destroy uninstalls what is left.")
	if state.DeleteProtection.ValueBool() {
		resp.Diagnostics.AddError("The release is protected from deletion",
			fmt.Sprintf("delete_protection is set on release %s; set it to false and apply first.", state.ID.ValueString()))
		return
	}
	c, ok := r.clients.ClientFor(ctx, state.ClusterConnection, &resp.Diagnostics)
	if !ok {
		return
	}
	timeout, err := durations.Parse(state.Timeout.ValueString())
	if err != nil {
		timeout, _ = durations.Parse(DefaultTimeout)
	}
	priv, err := loadPrivate(ctx, req.Private)
	if err != nil {
		resp.Diagnostics.AddError("Could not read private state", err.Error())
		return
	}
	name, ns := state.Name.ValueString(), state.Namespace.ValueString()
	if _, err := c.ConfirmCluster(ctx, connection.RecordedIn(ctx, state.ClusterUID.ValueString(), req.Private), "release "+state.ID.ValueString(), ns); err != nil {
		resp.Diagnostics.AddError("Destroy refused: cannot confirm the cluster", connection.Explain(err))
		return
	}
	recentReads.Forget(c, state.ID.ValueString()) // what the plans read is about to change
	recs := newRecords(c, ns, 0)
	history, err := recs.history(name)
	if err != nil {
		resp.Diagnostics.AddError("Could not read the release records", connection.Explain(err))
		return
	}
	var hooks []hook
	if len(history) > 0 && !state.DisableWebhooks.ValueBool() { // disable_webhooks: none runs
		if hooks, err = recordedHooks(history[len(history)-1], state.ID.ValueString(), c); err != nil {
			resp.Diagnostics.AddError("Could not read the release's hooks", connection.Explain(err))
			return
		}
	}
	if err := runHooks(ctx, c, hookRelease{name, ns, history}, hooks, release.HookPreDelete, timeout, nil); err != nil {
		resp.Diagnostics.AddError("Hook failed", connection.Explain(err))
		return
	}
	if len(history) > 0 {
		// Everything the latest record lists goes, as with helm uninstall,
		// even when objects is empty (a release imported or moved in and
		// never applied); what another owner holds now stays.
		more, err := unaccounted(ctx, c, history[len(history)-1], priv, ns, name)
		if err != nil {
			resp.Diagnostics.AddError("Could not tell which object to delete", connection.Explain(err))
			return
		}
		priv = mergedPrivate(priv, more)
	}
	ids, err := objectsToDelete(c, state, priv, history)
	if err != nil {
		resp.Diagnostics.AddError("Could not tell which object to delete", connection.Explain(err))
		return
	}
	if err := deleteObjects(ctx, c, ids, timeout); err != nil {
		resp.Diagnostics.AddError("Object not deleted", connection.Explain(err))
		return
	}
	if err := runHooks(ctx, c, hookRelease{name, ns, history}, hooks, release.HookPostDelete, timeout, nil); err != nil {
		resp.Diagnostics.AddError("Hook failed", connection.Explain(err))
		return
	}
	if err := recs.removeAll(name); err != nil {
		resp.Diagnostics.AddError("Could not remove the release records", connection.Explain(err))
	}
}

// objectsToDelete are the release's objects a destroy deletes: every key of
// objects, named as the private state of the last apply names it. Where there
// is none (the Pulumi bridge passes no private state to a delete), the latest
// record's manifest gives the apiVersion, and failing that the kind's
// preferred version; a CRD the record does not hold came from crds/, and is
// kept as helm keeps it.
func objectsToDelete(c *connection.Client, state model, priv private, history []*release.Release) ([]manifest.Identity, error) {
	var recorded private
	if len(history) > 0 {
		var err error
		if recorded, err = recordedObjects(history[len(history)-1], c); err != nil {
			recorded = nil // an unreadable manifest: the preferred versions serve
		}
	}
	keys := map[string]bool{}
	for key := range state.Objects.Elements() {
		keys[key] = true
	}
	for key := range priv {
		keys[key] = true
	}
	var ids []manifest.Identity
	for key := range keys {
		o, ok := priv[key]
		if !ok {
			o, ok = recorded[key]
		}
		if !ok {
			group, kind, _, _, err := yamldocs.ParseKey(key)
			if err != nil {
				return nil, err
			}
			if (schema.GroupKind{Group: group, Kind: kind}) == crdGroupKind {
				continue // from crds/: kept
			}
			apiVersion, err := objectset.PreferredVersion(c, key)
			if err != nil {
				return nil, err
			}
			if apiVersion == "" {
				continue // its kind is gone, and every object of it
			}
			o = privateObject{APIVersion: apiVersion}
		}
		if o.FromCRDsDir {
			continue // as helm uninstall keeps them: every object of the kind would go with them
		}
		id, err := identityOf(key, o)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

var crdGroupKind = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
