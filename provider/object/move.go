package object

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/managedfields"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/optimeout"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
	"github.com/k8sconnect/k8sconnect/provider/internal/resourceref"
	"github.com/k8sconnect/k8sconnect/provider/internal/scope"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

// Moving state in from another provider (docs/adr/0010-move-in-place.md; the
// guide is templates/guides/migrating.md.tmpl).
//
// A `moved` block from kubernetes_manifest (hashicorp/kubernetes),
// kubectl_manifest (the kubectl-style providers) or the upstream provider's
// k8sconnect_object turns that resource's state into this one's, the way an
// import would: the object is identified, nothing is written. The refresh that
// follows finds the object and its UID; the first apply then takes ownership in
// place and hands the old provider's field manager's share of our fields over
// to k8sconnect, so no field stays co-owned by a manager nobody runs any more.

var _ resource.ResourceWithMoveState = (*Resource)(nil)

// privateMovedFrom holds a movedFrom until the first apply after the move.
const privateMovedFrom = "moved_from"

// movedFrom is what the first apply after a move needs to know.
type movedFrom struct {
	Resource string   `json:"resource"` // e.g. "kubernetes_manifest (registry.terraform.io/hashicorp/kubernetes)"
	Managers []string `json:"managers"` // field managers whose share of our fields the apply takes over
}

// moveSource is one resource type whose state k8sconnect_object takes over.
type moveSource struct {
	resourceType string
	providerType string // the last element of the provider's address
	// notOurs rules out our own provider (same resource type, same provider
	// is a rename, which the engine does without us).
	notOurs bool
	read    func(state []byte) (moved, error) // the source state's attributes, as JSON
}

// moved is what a source's state says about its object.
type moved struct {
	body       string          // the manifest as the source applied it (YAML or JSON)
	namespace  string          // the namespace the source recorded, if the manifest has none
	connection json.RawMessage // a per-resource connection in our attribute names, or nil
	managers   []string
}

var moveSources = []moveSource{
	{resourceType: "kubernetes_manifest", providerType: "kubernetes", read: readKubernetesManifest},
	{resourceType: "kubectl_manifest", providerType: "kubectl", read: readKubectlManifest},
	{resourceType: "k8sconnect_object", providerType: "k8sconnect", notOurs: true, read: readUpstreamObject},
}

// movableFrom names the resources a moved block may bring in, for messages and docs.
func movableFrom() string {
	names := make([]string, 0, len(moveSources))
	for _, s := range moveSources {
		names = append(names, fmt.Sprintf("%s (%s provider)", s.resourceType, s.providerType))
	}
	return strings.Join(names, ", ")
}

func (r *Resource) MoveState(context.Context) []resource.StateMover {
	return []resource.StateMover{{StateMover: r.moveState}}
}

func (r *Resource) moveState(ctx context.Context, req resource.MoveStateRequest, resp *resource.MoveStateResponse) {
	addr := req.SourceProviderAddress
	providerType := addr[strings.LastIndex(addr, "/")+1:]
	i := slices.IndexFunc(moveSources, func(s moveSource) bool {
		return s.resourceType == req.SourceTypeName && s.providerType == providerType
	})
	if i < 0 && sameProvider(addr) {
		// OpenTofu 1.12 names our own provider as the source of some
		// instances of a for_each moved from another provider's resource
		// (measured: several of 50, varying by run). We have no resource of
		// that type, so the address is wrong, not the move: the type alone
		// says whose state it is.
		i = slices.IndexFunc(moveSources, func(s moveSource) bool {
			return s.resourceType == req.SourceTypeName && !s.notOurs
		})
		if i >= 0 {
			addr = "the " + moveSources[i].providerType + " provider"
		}
	}
	if i < 0 || (moveSources[i].notOurs && sameProvider(addr)) || req.SourceRawState == nil {
		resp.Diagnostics.AddError("Cannot move this resource into k8sconnect_object",
			fmt.Sprintf("k8sconnect_object takes over the state of %s; %s of %s is not one of them. Import the object "+
				"instead: an import block with id <apiVersion>/<kind>/[<namespace>/]<name>, e.g. apps/v1/Deployment/prod/web.",
				movableFrom(), req.SourceTypeName, addr))
		return
	}
	src, err := moveSources[i].read(req.SourceRawState.JSON)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the moved state", fmt.Sprintf("The state of %s (%s): %v", req.SourceTypeName, addr, err))
		return
	}
	if resp.Diagnostics.Append(movedState(ctx, src, resp)...); resp.Diagnostics.HasError() {
		return
	}
	from, _ := json.Marshal(movedFrom{Resource: fmt.Sprintf("%s (%s)", req.SourceTypeName, addr), Managers: src.managers})
	resp.Diagnostics.Append(resp.TargetPrivate.SetKey(ctx, privateMovedFrom, from)...)
}

// movedState writes the state of an object brought in by a move: what import
// would write, the body cleaned of server fields and a Secret's values.
func movedState(ctx context.Context, src moved, resp *resource.MoveStateResponse) diag.Diagnostics {
	var diags diag.Diagnostics
	obj, err := manifest.Parse(src.body)
	if err != nil {
		diags.AddError("Cannot read the moved state", "Its manifest is not a Kubernetes object: "+err.Error())
		return diags
	}
	body, err := cleanManifest(obj)
	if err != nil {
		diags.AddError("Cannot read the moved state", err.Error())
		return diags
	}
	id := manifest.IdentityOf(obj)
	if id.Namespace == "" {
		id.Namespace = src.namespace
	}
	conn, d := movedConnection(ctx, src.connection)
	diags.Append(d...)
	ref, d := resourceref.Value(ctx, id, types.StringValue(id.Namespace), conn)
	diags.Append(d...)
	if diags.HasError() {
		return diags
	}
	m := model{
		ID: types.StringValue(newID()), YAMLBody: types.StringValue(body),
		IgnoreFields: types.ListNull(types.StringType), SensitiveFields: types.ListNull(types.StringType),
		ClusterConnection: conn, ResourceRef: ref,
		ManagedStateProjection: types.MapNull(types.StringType),
		FieldOwnership:         types.MapNull(types.ListType{ElemType: types.StringType}),
		DeleteTimeout:          types.StringNull(), DeleteProtection: types.BoolNull(), ForceDestroy: types.BoolNull(),
		UID: types.StringNull(), ClusterUID: types.StringNull(), Timeouts: optimeout.Null(ctx),
	}
	diags.Append(resp.TargetState.Set(ctx, &m)...)
	return diags
}

// movedConnection turns a per-resource connection from the upstream provider
// (its attribute names are ours) into cluster_connection; null without one.
func movedConnection(ctx context.Context, raw json.RawMessage) (types.Object, diag.Diagnostics) {
	var diags diag.Diagnostics
	var fields map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &fields) != nil || fields == nil {
		return types.ObjectNull(connection.AttrTypes), diags
	}
	for k := range fields {
		if _, ok := connection.AttrTypes[k]; !ok {
			delete(fields, k) // a setting we do not have
		}
	}
	for k := range connection.AttrTypes {
		if _, ok := fields[k]; !ok {
			fields[k] = nil
		}
	}
	if exec, ok := fields["exec"].(map[string]any); ok {
		for k := range connection.ExecAttrTypes {
			if _, ok := exec[k]; !ok {
				exec[k] = nil
			}
		}
	}
	full, _ := json.Marshal(fields)
	typ := types.ObjectType{AttrTypes: connection.AttrTypes}
	v, err := tftypes.ValueFromJSONWithOpts(full, typ.TerraformType(ctx), tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true})
	if err != nil {
		diags.AddError("Cannot read the moved connection", err.Error())
		return types.ObjectNull(connection.AttrTypes), diags
	}
	obj, err := typ.ValueFromTerraform(ctx, v)
	if err != nil {
		diags.AddError("Cannot read the moved connection", err.Error())
		return types.ObjectNull(connection.AttrTypes), diags
	}
	o, _ := obj.(types.Object)
	return o, diags
}

// readKubernetesManifest reads hashicorp/kubernetes' kubernetes_manifest:
// manifest and object are dynamic values, stored as {"value": ..., "type": ...};
// field_manager is a block (a list of at most one), its name "Terraform" unless set.
func readKubernetesManifest(state []byte) (moved, error) {
	var attrs struct {
		Manifest     json.RawMessage `json:"manifest"`
		Object       json.RawMessage `json:"object"`
		FieldManager json.RawMessage `json:"field_manager"`
	}
	if err := json.Unmarshal(state, &attrs); err != nil {
		return moved{}, err
	}
	body := dynamicValue(attrs.Manifest)
	if len(body) == 0 || string(body) == "null" {
		return moved{}, fmt.Errorf("it has no manifest")
	}
	var object struct {
		Metadata struct {
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(dynamicValue(attrs.Object), &object)
	manager := "Terraform"
	var blocks []struct {
		Name *string `json:"name"`
	}
	if json.Unmarshal(attrs.FieldManager, &blocks) != nil {
		var one struct {
			Name *string `json:"name"`
		}
		if json.Unmarshal(attrs.FieldManager, &one) == nil {
			blocks = append(blocks, one)
		}
	}
	if len(blocks) > 0 && blocks[0].Name != nil && *blocks[0].Name != "" {
		manager = *blocks[0].Name
	}
	return moved{body: string(body), namespace: object.Metadata.Namespace, managers: []string{manager}}, nil
}

// readKubectlManifest reads kubectl_manifest: yaml_body, the namespace it
// recorded (override_namespace wins), and its field manager: field_manager
// for a server-side apply ("kubectl" unless set), and the name kubectl's
// client-side apply writes under otherwise.
func readKubectlManifest(state []byte) (moved, error) {
	var s struct {
		YAMLBody          string  `json:"yaml_body"`
		Namespace         string  `json:"namespace"`
		OverrideNamespace string  `json:"override_namespace"`
		FieldManager      *string `json:"field_manager"`
	}
	if err := json.Unmarshal(state, &s); err != nil || s.YAMLBody == "" {
		return moved{}, fmt.Errorf("it has no yaml_body")
	}
	body := s.YAMLBody
	if s.OverrideNamespace != "" {
		obj, err := manifest.Parse(body)
		if err != nil {
			return moved{}, err
		}
		obj.SetNamespace(s.OverrideNamespace)
		b, err := json.Marshal(obj.Object)
		if err != nil {
			return moved{}, err
		}
		body = string(b)
	}
	manager := "kubectl"
	if s.FieldManager != nil && *s.FieldManager != "" {
		manager = *s.FieldManager
	}
	return moved{body: body, namespace: s.Namespace, managers: []string{manager, "kubectl-client-side-apply"}}, nil
}

// readUpstreamObject reads the upstream provider's k8sconnect_object. Its
// field manager is named k8sconnect, as ours is, so there is nothing to hand
// over; its connection is "cluster" (schema version 1) or "cluster_connection"
// (version 0), with our attribute names.
func readUpstreamObject(state []byte) (moved, error) {
	var s struct {
		YAMLBody  string `json:"yaml_body"`
		ObjectRef *struct {
			Namespace string `json:"namespace"`
		} `json:"object_ref"`
		Cluster           json.RawMessage `json:"cluster"`
		ClusterConnection json.RawMessage `json:"cluster_connection"`
	}
	if err := json.Unmarshal(state, &s); err != nil || s.YAMLBody == "" {
		return moved{}, fmt.Errorf("it has no yaml_body")
	}
	m := moved{body: s.YAMLBody}
	if s.ObjectRef != nil {
		m.namespace = s.ObjectRef.Namespace
	}
	for _, c := range []json.RawMessage{s.Cluster, s.ClusterConnection} {
		if len(c) > 0 && string(c) != "null" {
			m.connection = c
		}
	}
	return m, nil
}

// dynamicValue unwraps a dynamic attribute's {"value": ..., "type": ...}.
func dynamicValue(raw json.RawMessage) json.RawMessage {
	var wrapped struct {
		Value json.RawMessage `json:"value"`
		Type  json.RawMessage `json:"type"`
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if d.Decode(&wrapped) == nil && wrapped.Type != nil {
		return wrapped.Value
	}
	return raw
}

// sameProvider reports whether addr is this provider (any registry host).
func sameProvider(addr string) bool {
	const ours = "/k8sconnect/k8sconnect"
	return strings.HasSuffix(addr, ours)
}

// inScope gives id the namespace its kind's scope implies, for a moved state
// that did not record one; id unchanged when the kind cannot be looked up.
func inScope(c *connection.Client, id manifest.Identity) manifest.Identity {
	if mapping, err := c.Mapping(id.GVK()); err == nil {
		id.Namespace = scope.Namespace(mapping, "")
	}
	return id
}

// pendingMove is the move the next apply completes, if any.
func pendingMove(ctx context.Context, r privatestate.Reader) (movedFrom, bool) {
	m, ok, err := privatestate.Load[movedFrom](ctx, r, privateMovedFrom)
	return m, ok && err == nil
}

// moveWarning tells, at plan time, what the first apply after a move does.
func moveWarning(id manifest.Identity, live *unstructured.Unstructured, mv movedFrom) string {
	fields, _ := managedfields.Of(live)
	var holding []string
	for _, m := range mv.Managers {
		if m != ssa.FieldManager && fields != nil && !fields.Manager(m).Empty() {
			holding = append(holding, fmt.Sprintf("%q", m))
		}
	}
	msg := fmt.Sprintf("%s (UID %s) was moved into this resource from %s. This apply takes ownership of it in place: "+
		"the object is updated, not replaced, and keeps its UID.", id, live.GetUID(), mv.Resource)
	if len(holding) > 0 {
		msg += fmt.Sprintf(" The fields k8sconnect applies are handed over from field manager %s, so they have one owner; "+
			"fields only %s set and this configuration does not are left as they are.",
			strings.Join(holding, " and "), strings.Join(holding, " and "))
	}
	return msg
}
