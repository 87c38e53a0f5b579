package patch

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectplan"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
	"github.com/k8sconnect/k8sconnect/provider/internal/scope"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
)

// ModifyPlan dry-runs the patch so the plan shows exactly which fields change,
// from what to what, and refuses what the apply would regret.
func (r *Resource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
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
	if creating {
		plan.PreviousOwners = types.MapUnknown(ownersType)
	} else {
		plan.PreviousOwners = state.PreviousOwners
	}
	plan.ManagedFields = types.MapUnknown(types.StringType)
	plan.FieldOwnership = types.MapUnknown(ownersType)
	plan = withWriteOnly(ctx, plan, req.Config, &resp.Diagnostics)
	defer func() {
		withoutWriteOnly(&plan)
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	}()

	target, targetKnown := targetOf(ctx, plan.Target)
	if !targetKnown || !plan.contentKnown() {
		return
	}
	ct, err := parseContent(plan)
	if err != nil || ct == nil {
		return // reported by ValidateConfig
	}
	if creating {
		plan.ID = types.StringValue(idFor(target, ct))
	}
	if creating || !plan.keptEqual(state) {
		r.warnSecretInPatch(plan, target, &resp.Diagnostics)
	}
	ctx, serverWarnings := connection.CollectWarnings(ctx)
	defer func() { connection.AddWarnings(&resp.Diagnostics, target.String(), serverWarnings()) }()
	if err := checkTargetMetadata(ct, target); err != nil {
		resp.Diagnostics.AddAttributeError(contentPath(plan), "Invalid patch", err.Error())
		return
	}
	c, ok := objectplan.Client(ctx, r.clients, plan.ClusterConnection, &resp.Diagnostics)
	if !ok || c == nil {
		return // known at apply, or refused
	}
	identity, ok := objectplan.Cluster(ctx, c, state.ClusterUID.ValueString(), req.Private, target.String(), target.Namespace, &resp.Diagnostics)
	if !ok {
		return
	}
	plan.ClusterUID = objectplan.ClusterUID(plan.ClusterUID, identity)
	live := readTarget(ctx, c, target, &resp.Diagnostics)
	if live == nil {
		return
	}
	manager := FieldManager(plan.ID.ValueString())
	red := redactor(plan.ID)
	defer scrubLater(red, &resp.Diagnostics, ct, target, live.Object)()
	predicted, ok := predict(ctx, c, target, ct, live, &plan, state, creating, manager, red, &resp.Diagnostics)
	if !ok {
		return
	}
	rivals, err := rivalPatches(live, manager, predicted)
	if err != nil {
		// Fail closed: a record that cannot be read cannot show there is no rival.
		resp.Diagnostics.AddError("Could not check for rival patches", fmt.Sprintf("Reading the field ownership of %s: %v", target, err))
		return
	}
	if len(rivals) > 0 {
		resp.Diagnostics.AddAttributeError(contentPath(plan), "Another k8sconnect_patch owns these fields", rivalMessage(target.String(), rivals))
		return
	}
	plan.ManagedFields = projectionValue(ctx, predicted, &resp.Diagnostics)
	if !creating && plan.ManagedFields.Equal(state.ManagedFields) && !drifted(ctx, req, live, manager, predicted, red) {
		plan.FieldOwnership = state.FieldOwnership
	}
	r.planOwners(ctx, req, resp, &plan, state, creating, target, live, manager, predicted, red)
}

// readTarget reads the target at plan time, checking its kind's scope
// against target.namespace and that no k8sconnect_object manages it. It
// returns nil when the plan goes no further: the kind or the target may be
// created in this run (checked at apply), or an error was reported.
func readTarget(ctx context.Context, c *connection.Client, target manifest.Identity, diags *diag.Diagnostics) *unstructured.Unstructured {
	if err := c.MissingCoreKind(target.GVK()); err != nil {
		diags.AddAttributeError(path.Root("target").AtName("kind"), connection.KindSummary(err),
			fmt.Sprintf("The target %s: %v", target, err))
		return nil
	}
	mapping, err := c.Mapping(target.GVK())
	if meta.IsNoMatchError(err) {
		return nil // the kind may be created in this run; checked at apply
	}
	if err != nil {
		diags.AddError("Could not look up the target's kind", err.Error())
		return nil
	}
	if scope.Namespaced(mapping) && target.Namespace == "" {
		diags.AddAttributeError(path.Root("target").AtName("namespace"), "target.namespace is required",
			fmt.Sprintf("%s is a namespaced kind; set target.namespace.", target.Kind))
		return nil
	}
	if !scope.Namespaced(mapping) && target.Namespace != "" {
		diags.AddAttributeError(path.Root("target").AtName("namespace"), "target.namespace must be empty",
			fmt.Sprintf("%s is cluster-scoped; remove target.namespace.", target.Kind))
		return nil
	}
	live, err := c.Resource(mapping, target.Namespace).Get(ctx, target.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil // may be created in this run; an error at apply if it is still missing
	}
	if err != nil {
		diags.AddError("Could not read the target", fmt.Sprintf("Reading %s: %v\n\n%s", target, err, connection.Remedy(err)))
		return nil
	}
	if err := selfPatchError(live, target); err != nil {
		diags.AddAttributeError(path.Root("target"), "Cannot patch an object k8sconnect_object manages", err.Error())
		return nil
	}
	return live
}

// predict dry-runs the patch on live and returns the fields it will set, as
// the plan shows them. ok is false when the plan goes no further: an
// unchanged JSON Patch that has taken effect (the plan keeps state's
// fields), or one that no longer applies, or an error reported in diags.
func predict(ctx context.Context, c *connection.Client, target manifest.Identity, ct *content, live *unstructured.Unstructured,
	plan *model, state model, creating bool, manager string, red sensitive.Redactor, diags *diag.Diagnostics) (projection.Projection, bool) {
	dry, err := send(ctx, c, target, ct, manager, true, "")
	if err != nil && !creating && ct.patchType == ktypes.JSONPatchType && (ct.given.writeOnly || plan.JSONPatch.Equal(state.JSONPatch)) && patchRefused(err) {
		// RFC 6902 operations are not idempotent: "remove /data/b" or "move"
		// cannot apply twice. An unchanged patch that the server refuses as
		// not applicable plans no change only when the live object shows
		// every operation's effect; anything else (drift, a 403, a 5xx) is
		// an error below, never silence. A json_patch_wo is in no state to
		// compare with, so it is taken as unchanged: showing its effect is
		// what no change means, and one that does not is still refused by
		// the apply, naming the operation.
		if effectInPlace(live, ct.body) {
			tflog.Debug(ctx, "unchanged json_patch has taken effect and does not apply again; planning no change",
				map[string]any{"target": target.String()})
			plan.ManagedFields, plan.FieldOwnership = state.ManagedFields, state.FieldOwnership
			return nil, false
		}
		// Real drift: a diff, not an error, so the plan (and a destroy's
		// refresh) still runs; the apply then fails naming the operation.
		attr := contentPath(*plan).String()
		diags.AddWarning("The "+attr+" no longer applies, and its effect is gone",
			fmt.Sprintf("The server refuses the %s on %s, and the live object no longer shows what it "+
				"did (someone changed the patched fields since):\n\n%s\n\nJSON Patch operations such as remove and "+
				"move cannot be applied twice, so applying this plan fails. Edit the %[1]s to reach the state you "+
				"want from the object as it is now, or use patch (strategic merge) or merge_patch, which can be "+
				"re-applied.", attr, target, rejection(err, ct, live)))
		return nil, false
	}
	switch {
	case err == nil:
		obs, oerr := projection.ObserveRedacted(dry, manager, nil, nil, nil, red)
		if oerr != nil {
			diags.AddError("Could not read the dry-run result", oerr.Error())
			return nil, false
		}
		return obs.Projection, true
	case dryRunUnsupported(err) && ct.patchType == ktypes.ApplyPatchType:
		// An admission webhook that cannot dry-run blocks the server's preview;
		// compute it from the kind's own merge metadata instead.
		local, lerr := previewLocally(c, target, live, ct, manager, red)
		if lerr != nil {
			diags.AddAttributeError(contentPath(*plan), "No preview for this patch",
				fmt.Sprintf("The server cannot dry-run patches of %s (%s), and a local preview failed: %v", target, apiError(err), lerr))
			return nil, false
		}
		diags.AddWarning("Patch preview computed locally",
			fmt.Sprintf("The server refused a dry run of the patch on %s (%s). The plan shows a preview computed from "+
				"the kind's merge metadata; admission webhooks may still change the result.", target, apiError(err)))
		return local, true
	case connection.IsNetworkFailure(err):
		diags.AddAttributeError(contentPath(*plan), connection.NoAnswer,
			fmt.Sprintf("The plan's server-side dry run of the patch on %s got no answer, so nothing was applied and "+
				"nothing was decided about the target:\n\n%v\n\n%s", target, err, connection.Remedy(err)))
		return nil, false
	}
	diags.AddAttributeError(contentPath(*plan), "The API server rejected the patch",
		fmt.Sprintf("A server-side dry run of the patch on %s failed, so nothing was applied:\n\n%s", target, rejection(err, ct, live)))
	return nil, false
}

// planOwners plans previous_owners (who owned each field the patch takes
// before it took it) and explains the fields it takes from their managers.
func (r *Resource) planOwners(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse, plan *model,
	state model, creating bool, target manifest.Identity, live *unstructured.Unstructured, manager string,
	predicted projection.Projection, red sensitive.Redactor) {
	before := previousOwners(live, manager, predicted)
	if creating {
		plan.PreviousOwners = ownersValue(ctx, before, &resp.Diagnostics)
		if r.verbosity != ownership.None {
			if msg := takeoverMessage(target.String(), before); msg != "" {
				resp.Diagnostics.AddWarning("Field ownership override", msg)
			}
		}
		return
	}
	// Fields added to the patch since it was created get their previous owners now.
	known := map[string][]string{}
	resp.Diagnostics.Append(state.PreviousOwners.ElementsAs(ctx, &known, false)...)
	for p, owners := range before {
		if _, ok := known[p]; !ok {
			known[p] = owners
		}
	}
	plan.PreviousOwners = ownersValue(ctx, known, &resp.Diagnostics)
	// A patch has no ignore_fields: it hands a field back by no longer setting it.
	ownership.Explain(ctx, target.String(), manager, live, predicted, ownership.StateProjection(ctx, state.ManagedFields),
		privatestate.Plan{Req: req, Resp: resp}, r.verbosity, &resp.Diagnostics,
		ownership.LetGoBy("remove them from the patch: [%s]"), ownership.Redacting(red))
}

func rivalMessage(target string, rivals map[string][]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "This patch would take fields of %s that another k8sconnect_patch manages:\n\n", target)
	managers := make([]string, 0, len(rivals))
	for m := range rivals {
		managers = append(managers, m)
	}
	sort.Strings(managers)
	for _, m := range managers {
		sort.Strings(rivals[m])
		fmt.Fprintf(&b, "  %s: %s\n", m, strings.Join(rivals[m], ", "))
	}
	b.WriteString("\nTwo patches on the same field would take it from each other on every apply. " +
		"Merge them into one k8sconnect_patch, or remove the field from one of them.")
	return b.String()
}

// takeoverMessage says which managers the new patch takes fields from.
func takeoverMessage(target string, before map[string][]string) string {
	byManager := map[string][]string{}
	for p, owners := range before {
		for _, m := range owners {
			byManager[m] = append(byManager[m], p)
		}
	}
	if len(byManager) == 0 {
		return ""
	}
	managers := make([]string, 0, len(byManager))
	for m := range byManager {
		managers = append(managers, m)
	}
	sort.Strings(managers)
	var b strings.Builder
	fmt.Fprintf(&b, "This patch takes ownership of fields of %s currently managed by: %s\n\n", target, strings.Join(managers, ", "))
	for _, m := range managers {
		sort.Strings(byManager[m])
		for _, p := range byManager[m] {
			fmt.Fprintf(&b, "  %s (from %s)\n", p, m)
		}
	}
	b.WriteString("\nIf that manager keeps reconciling these fields it will change them back, and the next plan " +
		"shows the drift. That is expected when patching cloud-provider defaults.")
	return b.String()
}

// apiError renders a rejection with the server's details: for a JSON Patch the
// status message alone ("an error in our request") hides which operation failed.
func apiError(err error) string {
	status, ok := err.(apierrors.APIStatus)
	if !ok {
		return err.Error()
	}
	st := status.Status()
	var b strings.Builder
	b.WriteString(st.Message)
	if d := st.Details; d != nil {
		for _, c := range d.Causes {
			fmt.Fprintf(&b, "\n  %s %s", c.Field, c.Message)
		}
	}
	return b.String()
}

// rejection renders the server's refusal of a patch. For a JSON Patch the
// server keeps to itself which operation failed and why ("the server rejected
// our request due to an error in our request"), so the operations are replayed
// on the live object, with the library the API server uses, to name it.
func rejection(err error, ct *content, live *unstructured.Unstructured) string {
	msg := apiError(err)
	if ct.patchType != ktypes.JSONPatchType || live == nil {
		return msg
	}
	if failed := failingOperation(live, ct.body, ct.given.attr); failed != "" {
		msg += "\n\n" + failed
	}
	return msg
}

// failingOperation applies a JSON Patch to obj one operation at a time and
// describes the first that fails, or returns "" if they all apply.
func failingOperation(obj *unstructured.Unstructured, body []byte, attr string) string {
	doc, err := json.Marshal(obj.Object)
	if err != nil {
		return ""
	}
	var ops []json.RawMessage
	if json.Unmarshal(body, &ops) != nil {
		return ""
	}
	for i, raw := range ops {
		var op struct{ Op, Path string }
		_ = json.Unmarshal(raw, &op)
		p, err := jsonpatch.DecodePatch(append(append([]byte("["), raw...), ']'))
		if err == nil {
			doc, err = p.Apply(doc)
		}
		if err != nil {
			return fmt.Sprintf("%s operation %d (%s %s) failed: %v", attr, i, op.Op, op.Path, err)
		}
	}
	return ""
}

// drifted reports whether the live values of the patched fields differ from
// what the patch sets (see ownership.LiveDiffers).
func drifted(ctx context.Context, req resource.ModifyPlanRequest, live *unstructured.Unstructured, manager string,
	planned projection.Projection, red sensitive.Redactor) bool {
	_, differs, err := ownership.LiveDiffers(ctx, req.Private, live, manager, nil, nil, planned, red)
	return err == nil && differs
}
