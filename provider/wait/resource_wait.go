// Package wait is the k8sconnect_wait resource (ADR 0007): it waits for an
// object that k8sconnect_object created to reach a state, so that resources
// which depend on it start only then.
//
// Waiting is its own resource because a failed Create taints the resource it
// belongs to: had k8sconnect_object waited, a timeout would make the next apply
// destroy and recreate the object (a PVC, a Job) instead of waiting again. Here
// only the wait is lost, which costs nothing: the next apply creates it again,
// which waits again on the very same object.
package wait

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/dynamicvalue"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/optimeout"
	"github.com/k8sconnect/k8sconnect/provider/internal/providerdata"
	"github.com/k8sconnect/k8sconnect/provider/internal/resourceref"
	"github.com/k8sconnect/k8sconnect/provider/internal/scope"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
	"github.com/k8sconnect/k8sconnect/provider/internal/waiting"
)

var (
	_ resource.ResourceWithConfigure      = (*Resource)(nil)
	_ resource.ResourceWithModifyPlan     = (*Resource)(nil)
	_ resource.ResourceWithValidateConfig = (*Resource)(nil)
)

// DefaultTimeout applies when wait_for.timeout is not set.
const DefaultTimeout = 10 * time.Minute

// privateUID is the private-state key holding the UID of the object the wait
// succeeded on, so Read can tell a replaced object from the one waited for.
const privateUID = "waited_uid"

// Resource implements k8sconnect_wait.
type Resource struct {
	clients *connection.Cache
	numbers dynamicvalue.Options
	status  func(ctx context.Context, msg string) // where progress shows besides the log
	phase   *providerdata.Phase                   // told when applying starts
}

// New returns the resource; the provider passes it a client cache in Configure.
func New() resource.Resource { return &Resource{} }

type model struct {
	ID          types.String    `tfsdk:"id"`
	ResourceRef types.Object    `tfsdk:"resource_ref"`
	WaitFor     types.Object    `tfsdk:"wait_for"`
	Status      types.Dynamic   `tfsdk:"status"`
	Timeouts    optimeout.Value `tfsdk:"timeouts"`
}

type waitForModel struct {
	Field      types.String `tfsdk:"field"`
	FieldValue types.Map    `tfsdk:"field_value"`
	Condition  types.String `tfsdk:"condition"`
	Rollout    types.Bool   `tfsdk:"rollout"`
	Ready      types.Bool   `tfsdk:"ready"`
	Timeout    types.String `tfsdk:"timeout"`
}

var pathWaitFor = path.Root("wait_for")

func (r *Resource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_wait"
}

func (r *Resource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	ref := resourceref.Attribute(connection.Input,
		"The resource_ref of the k8sconnect_object to wait for. A different object replaces this wait; "+
			"a different connection to the same object only updates it.")
	for _, name := range []string{"api_version", "kind", "namespace", "name"} {
		a, _ := ref.Attributes[name].(schema.StringAttribute) // resourceref's identity fields are strings
		a.PlanModifiers = append(a.PlanModifiers, stringplanmodifier.RequiresReplace())
		ref.Attributes[name] = a
	}
	resp.Schema = schema.Schema{
		Description: "Waits for a Kubernetes object to reach a state. A wait that times out fails the run and " +
			"stops resources that depend on it, while the object itself is left alone: the next apply waits " +
			"again on the same object. Deleting a wait does nothing in the cluster.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Description:   "The waited object's apiVersion, kind, namespace and name, joined by slashes.",
				Computed:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"resource_ref": ref,
			"wait_for": schema.SingleNestedAttribute{
				Description: "What to wait for: exactly one of field, field_value, condition, rollout or ready.",
				Required:    true,
				Attributes: map[string]schema.Attribute{
					"field": schema.StringAttribute{
						Description: "A field that must exist and be non-empty, such as " +
							"`status.loadBalancer.ingress[0].hostname` (kubectl's JSONPath filters, " +
							"`[?(@.type=='Ready')]`, select elements too). Its value is then in `status`.",
						Optional: true,
					},
					"field_value": schema.MapAttribute{
						Description: "Fields that must hold the given values, such as " +
							"`{ \"status.phase\" = \"Bound\" }`. Numbers and booleans are written as they print: \"3\", \"true\".",
						ElementType: types.StringType,
						Optional:    true,
					},
					"condition": schema.StringAttribute{
						Description: "A condition type that must be True, such as `Ready`, `Available` or `Complete`.",
						Optional:    true,
					},
					"rollout": schema.BoolAttribute{
						Description: "Wait until a Deployment, StatefulSet or DaemonSet has rolled out, as " +
							"`kubectl rollout status` judges it. Refused at plan for other kinds.",
						Optional: true,
					},
					"ready": schema.BoolAttribute{
						Description: "Wait until the object is ready, for any kind, by the Kubernetes community's " +
							"status conventions (kstatus, as kpt and Flux judge it): Deployments, StatefulSets and " +
							"DaemonSets rolled out, Jobs complete, PersistentVolumeClaims bound, LoadBalancer Services " +
							"with an address, and custom resources by observedGeneration and their Ready, Reconciling " +
							"and Stalled conditions. A custom resource with no status is ready, as kstatus counts it, " +
							"with a warning: wait for its Ready condition to wait for its controller. The same rule " +
							"judges the wait of k8sconnect_helm_release and k8sconnect_manifest_set. A failed Job or " +
							"a stalled resource ends the wait at once.",
						Optional: true,
					},
					"timeout": schema.StringAttribute{
						Description: "How long to wait, such as \"90s\" or \"15m\"; default \"10m\". This is the " +
							"only timeout.",
						Optional: true,
					},
				},
			},
			"status": schema.DynamicAttribute{
				Description: "For field waits only, the waited field pruned out of the object (rooted at `status` " +
					"when the path starts there): waiting for `status.loadBalancer.ingress[0].hostname` gives " +
					"`status.loadBalancer.ingress[0].hostname`. Refreshed on every plan, so a changed value " +
					"reaches what uses it. Null for other waits.",
				Computed: true,
			},
		},
		Blocks: map[string]schema.Block{"timeouts": optimeout.Block(ctx)},
	}
}

func (r *Resource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if data := providerdata.Receive(req.ProviderData, &resp.Diagnostics); data != nil {
		r.clients, r.numbers, r.status, r.phase = data.Clients, data.Numbers, data.Status, data.Phase
	}
}

func (r *Resource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var cfg model
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(validateWaitFor(ctx, cfg.WaitFor)...)
	resp.Diagnostics.Append(refuseRolloutWithoutOne(ctx, cfg)...)
}

// ModifyPlan refuses impossible waits before anything is applied and plans
// status: known to be null unless a field wait will fill it.
func (r *Resource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy: nothing happens in the cluster
	}
	var plan, state model
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	creating := req.State.Raw.IsNull()
	if !creating {
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(refuseRolloutWithoutOne(ctx, plan)...)

	if id, ok := idOf(ctx, plan.ResourceRef); ok {
		plan.ID = types.StringValue(id)
	}
	switch {
	case !isFieldWait(ctx, plan.WaitFor):
		plan.Status = types.DynamicNull()
	case !creating && !state.Status.IsNull() && onlyConnectionChanged(ctx, plan, state):
		plan.Status = state.Status // a rotated credential: no new wait
	case creating || !plan.ResourceRef.Equal(state.ResourceRef) || !plan.WaitFor.Equal(state.WaitFor):
		plan.Status = types.DynamicUnknown()
	case state.Status.IsNull():
		// Read found the field gone: the wait no longer holds, so plan an
		// update, which waits again, rather than keep passing on nothing.
		plan.Status = types.DynamicUnknown()
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

func (r *Resource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.phase.Applying()
	var plan model
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, d := optimeout.Start(ctx, plan.Timeouts, optimeout.Create)
	defer cancel()
	resp.Diagnostics.Append(d...)
	defer optimeout.Finish(ctx, &resp.Diagnostics, leftAlone)
	// On failure no state is saved: the next plan creates the wait again, which
	// is all a retry needs.
	if r.waitAndRecord(ctx, &plan, resp.Private, &resp.Diagnostics) {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

func (r *Resource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.phase.Applying()
	var plan model
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, d := optimeout.Start(ctx, plan.Timeouts, optimeout.Update)
	defer cancel()
	resp.Diagnostics.Append(d...)
	defer optimeout.Finish(ctx, &resp.Diagnostics, leftAlone)
	var state model
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if !resp.Diagnostics.HasError() && onlyConnectionChanged(ctx, plan, state) && !plan.Status.IsUnknown() {
		// Same object, same condition, new credentials: the wait held and
		// Read has checked the object is still the one it held on.
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		return
	}
	// On failure the prior state stays, with the prior wait_for, so the next
	// plan shows the same update and the next apply waits again.
	if r.waitAndRecord(ctx, &plan, resp.Private, &resp.Diagnostics) {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

// Read refreshes status for field waits; other waits are never re-judged
// here, since a Deployment that scales later should not fail a plan. A wait
// whose object is gone, or was replaced by another of the same name, leaves
// state so that the next apply waits on the object that exists now.
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
		if optimeout.KeepRead(ctx, &resp.Diagnostics, "the wait on "+state.ID.ValueString()) {
			resp.State.Raw = req.State.Raw
		}
	}()
	ref, diags := resourceref.FromObject(ctx, state.ResourceRef)
	resp.Diagnostics.Append(diags...)
	c, ok := r.client(ctx, ref, &resp.Diagnostics)
	if !ok {
		return
	}
	id := ref.Identity()
	mapping, err := c.Mapping(id.GVK())
	if connection.StaleCredentials(err, id.String(), &resp.Diagnostics) {
		return
	}
	if meta.IsNoMatchError(err) {
		tflog.Info(ctx, "the waited object's kind is no longer served; removing the wait from state", map[string]any{"object": id.String()})
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Read failed", fmt.Sprintf("Looking up %s: %v\n\n%s", id, err, connection.Remedy(err)))
		return
	}
	live, err := c.Resource(mapping, namespaceFor(mapping, id)).Get(ctx, id.Name, metav1.GetOptions{})
	if connection.StaleCredentials(err, id.String(), &resp.Diagnostics) {
		return
	}
	if apierrors.IsNotFound(err) {
		tflog.Info(ctx, "the waited object is gone; removing the wait from state", map[string]any{"object": id.String()})
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Read failed", fmt.Sprintf("Reading %s: %v\n\n%s", id, err, connection.Remedy(err)))
		return
	}
	if uid := waitedUID(ctx, req.Private); uid != "" && uid != string(live.GetUID()) {
		tflog.Info(ctx, "the waited object was replaced since the wait succeeded; removing the wait from state",
			map[string]any{"object": id.String(), "waited_uid": uid, "uid": string(live.GetUID())})
		resp.State.RemoveResource(ctx)
		return
	}
	spec, _, d := specOf(ctx, state.WaitFor)
	spec.Redactor = sensitive.New(state.ID.ValueString(), nil)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if spec.Field != nil {
		state.Status, d = r.statusOf(spec, live.Object)
		resp.Diagnostics.Append(d...)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// leftAlone is what a wait that failed leaves as it is.
const leftAlone = "The object was not changed, and nothing is tainted: only this wait failed; the next apply waits again."

// Delete does nothing: the wait owns nothing in the cluster.
func (r *Resource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}

// waitAndRecord waits for plan's object and fills the computed attributes.
func (r *Resource) waitAndRecord(ctx context.Context, plan *model, private privateSetter, diags *diag.Diagnostics) bool {
	ref, d := resourceref.FromObject(ctx, plan.ResourceRef)
	diags.Append(d...)
	spec, timeout, d := specOf(ctx, plan.WaitFor)
	diags.Append(d...)
	if diags.HasError() {
		return false
	}
	if id, ok := idOf(ctx, plan.ResourceRef); ok {
		spec.Redactor = sensitive.New(id, nil)
	}
	spec.APIVersion, spec.Kind = ref.APIVersion.ValueString(), ref.Kind.ValueString()
	c, ok := r.client(ctx, ref, diags)
	if !ok {
		return false
	}
	res, ok := r.await(ctx, c, ref.Identity(), spec, timeout, diags)
	if !ok {
		return false
	}
	id, _ := idOf(ctx, plan.ResourceRef)
	plan.ID = types.StringValue(id)
	plan.Status = types.DynamicNull()
	if spec.Field != nil {
		plan.Status, d = r.statusOf(spec, res.Object.Object)
		diags.Append(d...)
	}
	uid, _ := json.Marshal(string(res.Object.GetUID()))
	diags.Append(private.SetKey(ctx, privateUID, uid)...)
	return !diags.HasError()
}

type privateSetter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

type privateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

func waitedUID(ctx context.Context, private privateGetter) string {
	raw, _ := private.GetKey(ctx, privateUID)
	var uid string
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &uid)
	}
	return uid
}

// await runs the wait; on failure it adds the diagnostic that explains it.
func (r *Resource) await(ctx context.Context, c *connection.Client, id manifest.Identity, spec waiting.Spec, timeout time.Duration, diags *diag.Diagnostics) (waiting.Result, bool) {
	start := time.Now()
	deadline := start.Add(timeout)
	mapping, err := mappingBefore(ctx, c, id.GVK(), deadline)
	if err != nil {
		diags.AddError(fmt.Sprintf("Cannot wait for %s", id), err.Error())
		return waiting.Result{}, false
	}
	fields := map[string]any{"object": id.String(), "waiting_for": spec.Describe()}
	tflog.Info(ctx, fmt.Sprintf("%s: waiting up to %s for %s", id.Name, timeout, spec.Describe()), fields)
	res, err := waiting.Until(ctx, c.Resource(mapping, namespaceFor(mapping, id)), id.Name, spec.Evaluate, waiting.Options{
		Timeout: time.Until(deadline),
		Progress: func(st waiting.State, _ time.Duration) {
			line := progressLine(id.Name, st, time.Since(start))
			tflog.Info(ctx, line, fields)
			if r.status != nil {
				r.status(ctx, line)
			}
		},
	})
	if err == nil {
		tflog.Info(ctx, fmt.Sprintf("%s: done after %s: %s", id.Name, roundElapsed(time.Since(start)), res.State.Summary), fields)
		if spec.Ready && waiting.ReadyWithoutStatus(res.Object) {
			diags.AddWarning(fmt.Sprintf("%s is ready without a status", id),
				"No controller has written a status for it, which ready counts as ready, as kstatus, Helm and Flux "+
					"do: nothing tells a kind no controller reports on from one whose controller has not looked yet. "+
					"To wait until its controller says it is ready, wait for condition = \"Ready\" (or the "+
					"condition its controller sets) instead.")
		}
		return res, true
	}
	if optimeout.Ran(ctx) != nil {
		// The operation's own deadline: no request outlives it, so the
		// error says what the wait saw last, without the pods.
		summary, detail := failure(id, spec, timeout, err, res, nil, nil)
		diags.AddError(summary, detail)
		return res, false
	}
	// The run's context may be what ended: the pod listing gets its own.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	pods, podErr := waiting.Pods(pctx, c.Dynamic, res.Object)
	summary, detail := failure(id, spec, timeout, err, res, pods, podErr)
	diags.AddError(summary, detail)
	return res, false
}

// mappingBefore resolves the kind, waiting for it to be served (a CRD created
// in the same run) until the deadline.
func mappingBefore(ctx context.Context, c *connection.Client, gvk k8sschema.GroupVersionKind, deadline time.Time) (*meta.RESTMapping, error) {
	for {
		m, err := c.Mapping(gvk)
		if err == nil {
			return m, nil
		}
		if !meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("looking up kind %s: %w", gvk.Kind, err)
		}
		if missing := c.MissingCoreKind(gvk); missing != nil {
			return nil, missing // no CRD can bring a core kind: waiting cannot help
		}
		if time.Now().Add(2 * time.Second).After(deadline) {
			return nil, fmt.Errorf("the cluster does not serve %s (apiVersion %s); waited until the timeout for it to appear", gvk.Kind, gvk.GroupVersion())
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// namespaceFor applies the API's default namespace to namespaced kinds.
func namespaceFor(m *meta.RESTMapping, id manifest.Identity) string {
	return scope.Namespace(m, id.Namespace)
}

func (r *Resource) client(ctx context.Context, ref resourceref.Model, diags *diag.Diagnostics) (*connection.Client, bool) {
	return r.clients.ClientFor(ctx, ref.ClusterConnection, diags)
}

// statusOf is the status attribute of a field wait; null when the field is
// absent or empty.
func (r *Resource) statusOf(spec waiting.Spec, obj map[string]any) (types.Dynamic, diag.Diagnostics) {
	var diags diag.Diagnostics
	v, found := waiting.StatusValue(obj, spec.Field)
	if !found {
		return types.DynamicNull(), diags
	}
	if spec.Redactor.Sensitive(obj, spec.Field) {
		// A Secret's data: status holds the keyed hash, which changes with the
		// value, never the value (read it with the object data source's
		// sensitive secret_data).
		leaf, _ := spec.Field.Get(obj)
		v = redactLeaves(v, spec.Redactor.Render(obj, spec.Field, leaf))
	}
	tv, err := r.numbers.FromUnstructured(v)
	if err != nil {
		diags.AddError("Could not record status", fmt.Sprintf("%s: %v", spec.Field, err))
		return types.DynamicNull(), diags
	}
	return types.DynamicValue(tv), diags
}

// redactLeaves replaces every scalar of a pruned status value with hash.
func redactLeaves(v any, hash string) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = redactLeaves(e, hash)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = redactLeaves(e, hash)
		}
		return out
	case nil:
		return nil
	}
	return hash
}
