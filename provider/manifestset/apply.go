package manifestset

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	relutil "helm.sh/helm/v4/pkg/release/v1/util"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectset"
	"github.com/k8sconnect/k8sconnect/provider/internal/optimeout"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
	"github.com/k8sconnect/k8sconnect/provider/plugin/gcsettings"
)

func (r *Resource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	defer gcsettings.Raise(gcsettings.SetLimit)() // the whole bundle is in memory at once
	var plan model
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, d := optimeout.Start(ctx, plan.Timeouts, optimeout.Create)
	defer cancel()
	resp.Diagnostics.Append(d...)
	defer optimeout.Finish(ctx, &resp.Diagnostics, "")
	if r.apply(ctx, &plan, nil, req.Config, nil, resp.Private, &resp.Diagnostics) {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

func (r *Resource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	defer gcsettings.Raise(gcsettings.SetLimit)() // the whole bundle is in memory at once
	var plan, state model
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, d := optimeout.Start(ctx, plan.Timeouts, optimeout.Update)
	defer cancel()
	resp.Diagnostics.Append(d...)
	defer optimeout.Finish(ctx, &resp.Diagnostics, "")
	if r.apply(ctx, &plan, &state, req.Config, req.Private, resp.Private, &resp.Diagnostics) {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

// applyRun is one apply of the set: prepared, performed, recorded.
type applyRun struct {
	c       *connection.Client
	plan    *model
	ms      *members
	parent  parent
	timeout time.Duration
	version string
	// config gives yaml_body_wo, which a plan holds as null.
	config tfsdk.Config
	// prior are the objects of the last apply, by key; unchanged those of
	// them the plan found as the last apply left them, which this apply
	// leaves alone.
	prior     private
	unchanged map[string]bool
	// parentLive is the parent as last read or written.
	parentLive *unstructured.Unstructured
	deadline   time.Time
	applied    map[string]*unstructured.Unstructured
	// adopting is the tooling of the set an import brought in, which this
	// first apply after it takes over; "" otherwise.
	adopting string
	// notReady are the keys the wait gave up on, and waitErr why.
	notReady map[string]bool
	waitErr  error
}

// apply applies plan over state (nil for a create): prepare, perform,
// record. It reports whether plan now holds the state to keep.
func (r *Resource) apply(ctx context.Context, plan, state *model, config tfsdk.Config, in privatestate.Reader, out privatestate.Writer,
	diags *diag.Diagnostics) bool {
	a := &applyRun{plan: plan, version: r.version, config: config}
	if !a.prepare(ctx, r.clients, state, in, out, diags) || !a.perform(ctx, diags) || !a.record(ctx, out, diags) {
		return false
	}
	if a.waitErr != nil {
		diags.AddError("Objects of the set not ready", waitFailure(a.timeout, a.waitErr, optimeout.Of(a.waitErr)))
		// An update keeps what it applied, each object not ready marked
		// so that the next apply waits for it again. A create keeps
		// nothing: Terraform would taint the set and replace it, deleting
		// every object, where the next apply should only wait again
		// (ADR 0007). It takes up the objects this one made, which carry
		// the set's label.
		return state != nil
	}
	return true
}

// prepare reads the source again, names the parent and what the last apply
// made.
func (a *applyRun) prepare(ctx context.Context, clients *connection.Cache, state *model, in privatestate.Reader, out privatestate.Writer,
	diags *diag.Diagnostics) bool {
	c, ok := clients.ClientFor(ctx, a.plan.ClusterConnection, diags)
	if !ok {
		return false
	}
	a.c = c
	recentReads.Forget(c, a.plan.ID.ValueString()) // what the plans read is about to change
	if a.timeout, ok = timeoutOf(a.plan, diags); !ok {
		return false
	}
	// The plan recorded the identity it saw (state's, for an update): the
	// apply must reach the same cluster.
	recorded := ""
	if !a.plan.ClusterUID.IsUnknown() {
		recorded = a.plan.ClusterUID.ValueString()
	}
	cluster, err := c.CheckCluster(ctx, connection.Recorded{Identity: recorded}, "set "+a.plan.ID.ValueString(), namespaceOf(a.plan))
	if err != nil {
		diags.AddError("Cannot confirm which cluster this is", connection.Explain(err))
		return false
	}
	diags.Append(connection.Record(ctx, out, cluster)...)
	if a.plan.ClusterUID.IsUnknown() {
		a.plan.ClusterUID = types.StringValue(cluster.Identity)
	}
	source := withWriteOnly(ctx, *a.plan, a.config, diags)
	if a.ms = readMembers(ctx, &source, c, diags); a.ms == nil {
		return false
	}
	if a.parent, err = scoped(c, parentOf(a.plan, state, a.ms)); err != nil {
		diags.AddError("The set's ApplySet parent cannot be used", connection.Explain(err))
		return false
	}
	asMembersOf(a.ms, a.parent)
	a.prior = private{}
	if state != nil {
		a.prior = loadPrivate(ctx, in)
		for key := range state.Objects.Elements() {
			if _, ok := a.prior[key]; !ok {
				a.prior[key] = privateObject{}
			}
		}
		a.unchanged = unchangedMembers(a.plan, state, a.ms)
		a.adopting = loadAdopting(ctx, in)
	}
	live, err := readParent(ctx, c, a.parent)
	if err == nil && live == nil && a.parent.custom() {
		err = fmt.Errorf("the custom resource parent %s %s no longer exists; the set does not create one. Create it "+
			"again, or let the set use its own Secret parent", a.parent.Kind, a.parent.id())
	}
	if err == nil {
		err = checkParent(live, a.parent, a.adopting)
	}
	if err != nil {
		diags.AddError("The set's ApplySet parent cannot be used", connection.Explain(err))
		return false
	}
	a.parentLive = live
	return true
}

// unchangedMembers are the members whose planned element of objects is
// known and equal to the one in state: the plan found the fields the set
// owns as the last apply left them and the body would change none of them
// (a drifted member plans as unknown), so applying it again would change
// nothing, as kubectl's apply of an unchanged object changes nothing, only
// slower. A new yaml_body_wo_revision asks for every object to be sent.
func unchangedMembers(plan, state *model, ms *members) map[string]bool {
	out := map[string]bool{}
	if plan.Objects.IsUnknown() || plan.Objects.IsNull() || !plan.YAMLBodyWORevision.Equal(state.YAMLBodyWORevision) {
		return out
	}
	planned, recorded := plan.Objects.Elements(), state.Objects.Elements()
	for _, m := range ms.all {
		if v, ok := planned[m.key]; ok && !v.IsUnknown() && v.Equal(recorded[m.key]) {
			out[m.key] = true
		}
	}
	return out
}

func timeoutOf(m *model, diags *diag.Diagnostics) (time.Duration, bool) {
	d, err := time.ParseDuration(m.Timeout.ValueString())
	if err != nil {
		diags.AddAttributeError(pathTimeout, "Invalid timeout", err.Error())
		return 0, false
	}
	return d, true
}

// perform writes the parent as the superset of the last set and this one,
// applies every member in order (CRDs awaited until served), prunes or lets
// go what left the source, and writes the parent as this set, as kubectl
// apply --prune --applyset does.
func (a *applyRun) perform(ctx context.Context, diags *diag.Diagnostics) bool {
	a.deadline = time.Now().Add(a.timeout)
	now := a.ms.keys()
	var superset []string
	for key := range now {
		superset = append(superset, key)
	}
	for key := range a.prior {
		if !now[key] {
			superset = append(superset, key)
		}
	}
	// The set's Namespaces first: the parent may live in one of them.
	var namespaces, rest []member
	for _, m := range a.ms.all {
		if m.obj.GetKind() == "Namespace" && m.obj.GroupVersionKind().Group == "" {
			namespaces = append(namespaces, m)
		} else {
			rest = append(rest, m)
		}
	}
	a.applied = map[string]*unstructured.Unstructured{}
	if err := a.applyAll(ctx, namespaces); err != nil {
		diags.AddError("Object of the set not applied", connection.Explain(err))
		return false
	}
	if err := a.writeParent(ctx, superset); err != nil {
		diags.AddError("ApplySet parent not written", connection.Explain(err))
		return false
	}
	if err := a.applyAll(ctx, rest); err != nil {
		diags.AddError("Object of the set not applied", connection.Explain(err))
		return false
	}
	if err := a.prune(ctx); err != nil {
		diags.AddError("Object that left the set not pruned", connection.Explain(err))
		return false
	}
	if err := a.writeParent(ctx, slices.Collect(maps.Keys(now))); err != nil {
		diags.AddError("ApplySet parent not written", connection.Explain(err))
		return false
	}
	if a.plan.Wait.ValueBool() {
		keys := make([]string, len(a.ms.all))
		for i, m := range a.ms.all {
			keys[i] = m.key
		}
		a.notReady, a.waitErr = objectset.WaitReady(ctx, a.c, keys, a.applied, a.deadline, false)
	}
	return true
}

// waitFailure explains a wait that ended before every object was ready.
func waitFailure(timeout time.Duration, err error, op *optimeout.Exceeded) string {
	if op != nil {
		return fmt.Sprintf("%v\n\nEvery object is applied and the set's membership recorded; nothing is tainted or "+
			"deleted, and what is not ready is left as it is. The %s timeout (%s) ended the wait before timeout = %q did; "+
			"the next apply applies what changed and waits again.", connection.Explain(err), op.Op, op.Setting, timeout.String())
	}
	return fmt.Sprintf("%v\n\nEvery object is applied and the set's membership recorded; nothing is tainted or "+
		"deleted. The next apply applies what changed and waits again (timeout = %q, for the whole apply). "+
		"To apply without waiting, set wait = false.", connection.Explain(err), timeout.String())
}

// writeParent writes the parent as the set of keys, unless it already
// says so.
func (a *applyRun) writeParent(ctx context.Context, keys []string) error {
	want := parentObject(a.parent, a.version, keys)
	if parentSays(a.parentLive, want) {
		return nil
	}
	live, err := ssa.Apply(ctx, a.c, want, ssa.Options{FieldManager: parentFieldManager})
	if err != nil {
		return err
	}
	a.parentLive = live
	return nil
}

// applyAll applies members kind by kind, the members of one kind in
// parallel, each CRD awaited until its kind is served.
func (a *applyRun) applyAll(ctx context.Context, ms []member) error {
	var mu sync.Mutex
	return objectset.KindByKind(ms, func(m member) string { return m.obj.GetKind() }, func(m member) error {
		if a.unchanged[m.key] {
			return nil
		}
		obj, err := a.applyOne(ctx, m)
		if err != nil {
			return fmt.Errorf("%s: %w", m.key, err)
		}
		if m.crd {
			if err := objectset.WaitEstablished(ctx, a.c, obj, max(time.Until(a.deadline), time.Second)); err != nil {
				return fmt.Errorf("%s: waiting until its kind is served: %w", m.key, err)
			}
		}
		mu.Lock()
		a.applied[m.key] = obj
		mu.Unlock()
		return nil
	})
}

// errTaken is an object the set was to create that someone else made in the
// meantime.
var errTaken = errors.New("it was made by someone else since the plan; nothing of it was changed")

// applyOne applies one member. One the last apply did not make is created
// exclusively (a create-only apply): if it exists by now, it is taken only
// when it carries this set's part-of label (an apply that did not finish).
func (a *applyRun) applyOne(ctx context.Context, m member) (*unstructured.Unstructured, error) {
	if _, ours := a.prior[m.key]; !ours {
		obj := m.obj.DeepCopy()
		obj.SetResourceVersion(ssa.CreateOnlyVersion)
		created, err := ssa.Apply(ctx, a.c, obj, ssa.Options{FieldManager: ssa.FieldManager})
		if err == nil {
			return created, nil
		}
		if !apierrors.IsConflict(err) {
			return nil, err
		}
		id := manifest.IdentityOf(m.obj)
		live, gerr := a.c.Get(ctx, id.GVK(), m.obj.GetNamespace(), id.Name)
		if gerr != nil {
			return nil, fmt.Errorf("it exists, and reading it to see whose it is failed: %w", gerr)
		}
		switch partOf := live.GetLabels()[labelPartOf]; {
		case partOf == a.parent.applySetID():
		case partOf == "" && a.plan.TakeOwnership.ValueBool():
			return a.takeOver(ctx, m, live)
		default:
			return nil, errTaken
		}
	}
	applied, err := ssa.Apply(ctx, a.c, m.obj.DeepCopy(), ssa.Options{FieldManager: ssa.FieldManager})
	if err != nil || a.adopting == "" {
		return applied, err
	}
	// The first apply after an import: the fields the set's last tool
	// applied, which the source sets too, become the set's alone.
	if from := installers(applied); len(from) > 0 {
		return ssa.TakeOver(ctx, a.c, applied, from)
	}
	return applied, nil
}

// takeOver makes live, an object that exists and belongs to no set, the
// set's (take_ownership): applied, then the fields it sets handed from
// every other field manager to the set's, so that it has one owner and a
// later apply that drops a field deletes it.
func (a *applyRun) takeOver(ctx context.Context, m member, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	applied, err := ssa.Apply(ctx, a.c, m.obj.DeepCopy(), ssa.Options{FieldManager: ssa.FieldManager})
	if err != nil {
		return nil, err
	}
	var from []string
	for _, e := range live.GetManagedFields() {
		if e.Manager != ssa.FieldManager && e.Subresource == "" && !slices.Contains(from, e.Manager) {
			from = append(from, e.Manager)
		}
	}
	if len(from) == 0 {
		return applied, nil
	}
	return ssa.TakeOver(ctx, a.c, applied, from)
}

// prune deletes, in Helm's uninstall order, the objects of the last apply
// that the source no longer gives, each bound to its UID and only while it
// carries this set's part-of label; with prune = false it takes the label
// off instead and leaves the object.
func (a *applyRun) prune(ctx context.Context) error {
	now := a.ms.keys()
	var gone []manifest.Identity
	for key, o := range a.prior {
		if now[key] {
			continue
		}
		id, err := objectset.IdentityOf(a.c, key, o.APIVersion)
		if err != nil {
			return err
		}
		if id != nil {
			gone = append(gone, *id)
		}
	}
	// In the reverse of the order of the apply: custom resources before
	// their CRDs, namespaced objects before their Namespace.
	slices.SortStableFunc(gone, func(x, y manifest.Identity) int { return applyRank(y) - applyRank(x) })
	return objectset.KindByKind(gone, func(id manifest.Identity) string { return id.Kind }, func(id manifest.Identity) error {
		live, err := a.c.GetMetadata(ctx, id.GVK(), id.Namespace, id.Name)
		switch {
		case connection.Gone(err, id.Name), a.c.GoneWithItsKind(err, id.GVK()):
			return nil
		case err != nil:
			return fmt.Errorf("%s: %w", id, err)
		case live.GetLabels()[labelPartOf] != a.parent.applySetID():
			tflog.Warn(ctx, "not pruned: no longer this set's", map[string]any{"object": id.String()})
			return nil
		case !a.plan.Prune.ValueBool():
			return letGo(ctx, a.c, id, live)
		}
		return objectset.DeleteAndWait(ctx, a.c, id, live, a.deadline)
	})
}

// applyRank is an object's place in the order of the apply: CRDs, then
// cluster-scoped objects, then namespaced ones, each in Helm's install
// order, unknown kinds last.
func applyRank(id manifest.Identity) int {
	scope := 2
	switch {
	case id.Kind == "CustomResourceDefinition":
		scope = 0
	case id.Namespace == "":
		scope = 1
	}
	return scope*(len(relutil.InstallOrder)+1) + objectset.KindRank(relutil.InstallOrder, id.Kind)
}

// letGo takes the set's part-of label off an object, bound to its UID.
func letGo(ctx context.Context, c *connection.Client, id manifest.Identity, live *unstructured.Unstructured) error {
	return takeMarksOff(ctx, c, id.GVK(), live, ssa.FieldManager, []string{labelPartOf}, nil)
}

// record completes the plan into the state the apply leaves: each object's
// projection as applied, and its private state.
func (a *applyRun) record(ctx context.Context, out privatestate.Writer, diags *diag.Diagnostics) bool {
	plan := a.plan
	priv := private{}
	elems := map[string]attr.Value{}
	var planned map[string]attr.Value
	if !plan.Objects.IsUnknown() && !plan.Objects.IsNull() {
		planned = plan.Objects.Elements()
	}
	for _, m := range a.ms.all {
		if a.unchanged[m.key] {
			// As the last apply left it: its element, and what is kept of
			// it in private state, stay as they are.
			elems[m.key] = planned[m.key]
			o := a.prior[m.key]
			o.NotReady = false // one still owed a wait plans as changed, unless wait is now false
			priv[m.key] = o
			continue
		}
		obs, err := projection.ObserveRedacted(a.applied[m.key], ssa.FieldManager, nil, setMarks, m.ignored, m.red)
		if err != nil {
			diags.AddError("Could not read an applied object", m.key+": "+connection.Explain(err))
			return false
		}
		value, stored := objectset.Applied(ctx, m.key, obs, planned[m.key])
		elems[m.key] = value
		priv[m.key] = privateObject{APIVersion: m.obj.GetAPIVersion(), Body: m.body,
			NotReady: a.notReady[m.key]}
		diags.Append(ownership.Record(ctx, privatestate.Of{W: out, Object: m.key}, obs, stored)...)
	}
	for key := range a.prior {
		if _, still := priv[key]; !still {
			diags.Append(objectset.Forget(ctx, out, key)...)
		}
	}
	plan.Objects = types.MapValueMust(objectset.ProjectionType, elems)
	plan.ID = types.StringValue(a.parent.id())
	plan.ApplySetID = types.StringValue(a.parent.applySetID())
	diags.Append(priv.save(ctx, out)...)
	if a.adopting != "" {
		diags.Append(saveAdopted(ctx, out)...)
	}
	return !diags.HasError()
}
