package manifestset

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/handon"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectset"
	"github.com/k8sconnect/k8sconnect/provider/internal/optimeout"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
	"github.com/k8sconnect/k8sconnect/provider/internal/refresh"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
	"github.com/k8sconnect/k8sconnect/provider/plugin/gcsettings"
)

// Read refreshes objects from the cluster: each object's fields that
// k8sconnect owned after the last apply, with their live values, so what
// someone changed shows in the next plan as drift on our fields; an object
// deleted outside leaves the map, and the next plan creates it again.
func (r *Resource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	defer gcsettings.Raise(gcsettings.SetLimit)() // the whole bundle is in memory at once
	var state model
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, d := optimeout.Start(ctx, state.Timeouts, optimeout.Read)
	defer cancel()
	resp.Diagnostics.Append(d...)
	defer func() {
		if optimeout.KeepRead(ctx, &resp.Diagnostics, "set "+state.ID.ValueString()) {
			resp.State.Raw = req.State.Raw
		}
	}()
	c, ok := r.clients.ClientFor(ctx, state.ClusterConnection, &resp.Diagnostics)
	if !ok {
		return
	}
	subject := "set " + state.ID.ValueString()
	// As every Read (see package refresh): only a definite answer changes
	// state; a cluster that cannot be confirmed keeps it, with a warning.
	cluster, outcome := refresh.Cluster(ctx, c, connection.RecordedIn(ctx, state.ClusterUID.ValueString(), req.Private),
		resp.Private, subject, namespaceOf(&state), &resp.Diagnostics)
	if outcome != refresh.Found {
		return
	}
	if state.ClusterUID.ValueString() == "" {
		state.ClusterUID = types.StringValue(cluster)
	}
	priv := loadPrivate(ctx, req.Private)
	rules, _ := objectset.IgnoreRulesOf(ctx, state.IgnoreFields, pathIgnoreFields, &resp.Diagnostics)
	keys := slices.Sorted(maps.Keys(state.Objects.Elements()))
	values := make([]attr.Value, len(keys))
	errs := make([]error, len(keys))
	red := sensitive.New(state.ID.ValueString(), nil)
	objectset.InParallel(len(keys), func(i int) {
		key := keys[i]
		seen := time.Now()
		var live *unstructured.Unstructured
		values[i], live, errs[i] = readOne(ctx, c, key, priv[key], red, rules, req.Private)
		if live != nil {
			recentReads.Remember(c, state.ID.ValueString(), key, handon.Read{Obj: live, Seen: seen})
		}
	})
	for i := range keys {
		if errs[i] != nil && refresh.Unanswered(ctx, errs[i], subject, &resp.Diagnostics) {
			return // one warning for the set; no object of it is changed in state
		}
	}
	elems := map[string]attr.Value{}
	for i, key := range keys {
		if errs[i] != nil {
			resp.Diagnostics.AddError("Could not read an object of the set", key+": "+connection.Explain(errs[i]))
			continue
		}
		if values[i] == nil {
			continue // deleted outside
		}
		elems[key] = values[i]
		before := ownership.StateProjection(ctx, objectset.MapOf(state.Objects.Elements()[key]))
		after := ownership.StateProjection(ctx, objectset.MapOf(values[i]))
		resp.Diagnostics.Append(ownership.Refreshed(ctx, privatestate.Of{R: req.Private, W: resp.Private, Object: key}, before, after)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	state.Objects = types.MapValueMust(objectset.ProjectionType, elems)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// readOne is one object's refreshed projection, and the object as read; nil
// when it is gone.
func readOne(ctx context.Context, c *connection.Client, key string, o privateObject, red sensitive.Redactor,
	rules objectset.IgnoreRules, in privatestate.Reader) (attr.Value, *unstructured.Unstructured, error) {
	id, err := objectset.IdentityOf(c, key, o.APIVersion)
	if err != nil || id == nil {
		return nil, nil, err
	}
	return objectset.Refreshed(ctx, c, *id, objectset.OwnedAtApply(ctx, in, key), setMarks, rules.FieldsOf(key), red)
}
