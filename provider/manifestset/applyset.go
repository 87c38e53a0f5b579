package manifestset

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectplan"
	"github.com/k8sconnect/k8sconnect/provider/internal/yamldocs"
)

// kubectl's ApplySet (KEP-3659), as kubectl 1.32 writes it: the parent
// carries the id label and the tooling, kinds and namespaces annotations;
// every member carries the part-of label with the parent's id. These are
// written here rather than through k8s.io/kubectl's apply package, which
// would bring kubectl's command tree into the provider for a hash and four
// names.
const (
	labelApplySetID              = "applyset.kubernetes.io/id"
	labelPartOf                  = objectplan.LabelApplySetPartOf
	annotationTooling            = "applyset.kubernetes.io/tooling"
	annotationContainsGroupKinds = "applyset.kubernetes.io/contains-group-kinds"
	annotationNamespaces         = "applyset.kubernetes.io/additional-namespaces"
	// toolingName is the tooling annotation's name part; kubectl refuses a
	// parent whose tooling names another tool, and so does this set.
	toolingName = "k8sconnect"
	// parentFieldManager writes the parent's marks, as kubectl writes them
	// under "kubectl-applyset".
	parentFieldManager = toolingName + "-applyset"
)

// setMarks are the fields of a member that the set writes and no projection
// shows: the part-of label.
var setMarks = []objectpath.Path{{objectpath.Field("metadata"), objectpath.Field("labels"), objectpath.Field(labelPartOf)}}

// parent is the object the set's membership is recorded on.
type parent struct {
	APIVersion, Kind, Namespace, Name string
}

func (p parent) id() string { return p.Namespace + "/" + p.Name }

func (p parent) gvk() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(p.APIVersion, p.Kind)
}

// custom tells a custom resource parent from a Secret or ConfigMap: kubectl
// neither creates nor deletes one, and its CRD must allow it.
func (p parent) custom() bool { return p.gvk().Group != "" }

// applySetID is the ApplySet's id: "applyset-" + the unpadded URL-safe
// base64 of sha256 of "<name>.<namespace>.<kind>.<group>", + "-v1".
func (p parent) applySetID() string {
	sum := sha256.Sum256([]byte(strings.Join([]string{p.Name, p.Namespace, p.Kind, p.gvk().Group}, ".")))
	return "applyset-" + base64.RawURLEncoding.EncodeToString(sum[:]) + "-v1"
}

// parentOf is the parent m names or, for a set that names none, the one
// in state (id, and what applyset named there, as an import records it)
// or, for a new set, the default one of its members.
func parentOf(m *model, state *model, ms *members) parent {
	if p, ok := parentNamed(m.ApplySet, namespaceOf(m)); ok {
		return p
	}
	if state != nil && state.ID.ValueString() != "" {
		return parentInState(state.ID.ValueString(), state.ApplySet)
	}
	return parent{APIVersion: "v1", Kind: "Secret", Namespace: namespaceOf(m), Name: defaultParentName(ms)}
}

// value is applyset naming p in full.
func (p parent) value() types.Object {
	return types.ObjectValueMust(applySetTypes, map[string]attr.Value{"name": types.StringValue(p.Name),
		"namespace": types.StringValue(p.Namespace), "kind": types.StringValue(p.Kind),
		"api_version": types.StringValue(p.APIVersion)})
}

// parentNamed is the parent an applyset value names, its namespace ns
// when it gives none; false when it is null or unknown.
func parentNamed(applySet types.Object, ns string) (parent, bool) {
	if applySet.IsNull() || applySet.IsUnknown() {
		return parent{}, false
	}
	attrs := applySet.Attributes()
	p := parent{APIVersion: "v1", Kind: "Secret", Namespace: ns}
	if v, ok := attrs["name"].(types.String); ok {
		p.Name = v.ValueString()
	}
	// A namespace written out, even "" (a cluster-scoped parent, as
	// scoped records it), is the parent's.
	if v, ok := attrs["namespace"].(types.String); ok && !v.IsNull() && !v.IsUnknown() {
		p.Namespace = v.ValueString()
	}
	if v, ok := attrs["kind"].(types.String); ok && v.ValueString() != "" {
		p.Kind = v.ValueString()
	}
	if v, ok := attrs["api_version"].(types.String); ok && v.ValueString() != "" {
		p.APIVersion = v.ValueString()
	}
	return p, true
}

// parentInState is the parent of a set whose state's id is id and whose
// applyset there was applySet.
func parentInState(id string, applySet types.Object) parent {
	ns, name, _ := strings.Cut(id, "/")
	p := parent{APIVersion: "v1", Kind: "Secret", Namespace: ns, Name: name}
	if named, ok := parentNamed(applySet, ns); ok {
		p.APIVersion, p.Kind = named.APIVersion, named.Kind
	}
	return p
}

// checkParentKind refuses an applyset that names no kind a parent can be:
// a Secret or ConfigMap (apiVersion v1), or a custom resource, whose
// apiVersion has a group.
func checkParentKind(p parent) error {
	switch {
	case p.Kind == "Secret" || p.Kind == "ConfigMap":
		if p.APIVersion != "v1" {
			return fmt.Errorf("a %s parent has api_version v1, not %q", p.Kind, p.APIVersion)
		}
	case !p.custom():
		return fmt.Errorf("%s %s cannot be an ApplySet parent: a parent is a Secret, a ConfigMap or a custom resource "+
			"(give its api_version with its group, such as example.com/v1)", p.APIVersion, p.Kind)
	}
	return nil
}

// scoped is p with its namespace dropped when its kind is cluster-scoped:
// a custom resource parent may be.
func scoped(c *connection.Client, p parent) (parent, error) {
	if !p.custom() {
		return p, nil
	}
	m, err := c.Mapping(p.gvk())
	if err != nil {
		return p, fmt.Errorf("the ApplySet parent's kind %s %s: %w", p.APIVersion, p.Kind, err)
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		p.Namespace = ""
	}
	return p, nil
}

// labelParentType is the label a CRD carries when its objects may be
// ApplySet parents, as kubectl requires it.
const labelParentType = "applyset.kubernetes.io/is-parent-type"

// checkParentType refuses a custom resource parent whose CRD does not carry
// labelParentType, as kubectl refuses it.
func checkParentType(ctx context.Context, c *connection.Client, p parent) error {
	m, err := c.Mapping(p.gvk())
	if err != nil {
		return err
	}
	name := m.Resource.Resource + "." + m.Resource.Group
	crd, err := c.Get(ctx, schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, "", name)
	if err != nil {
		return fmt.Errorf("reading the CustomResourceDefinition %s, to see whether its objects may be ApplySet parents: %w", name, err)
	}
	if crd.GetLabels()[labelParentType] != "true" {
		return fmt.Errorf("a %s cannot be an ApplySet parent: its CustomResourceDefinition %s lacks the label %s=true, "+
			"which kubectl requires as well. Label the CRD, or let the set use its own Secret parent", p.Kind, name, labelParentType)
	}
	return nil
}

// markMembers gives every member the part-of label with id.
func markMembers(ms *members, id string) {
	for _, m := range ms.all {
		labels := m.obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[labelPartOf] = id
		m.obj.SetLabels(labels)
	}
}

// groupKindsOf are the group kinds of keys as the contains-group-kinds
// annotation writes them ("Deployment.apps", "ConfigMap").
func groupKindsOf(keys []string) []string {
	seen := map[string]bool{}
	for _, key := range keys {
		group, kind, _, _, err := yamldocs.ParseKey(key)
		if err != nil {
			continue
		}
		seen[schema.GroupKind{Group: group, Kind: kind}.String()] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// namespacesOf are the namespaces of keys other than skip, as the
// additional-namespaces annotation writes them.
func namespacesOf(keys []string, skip string) []string {
	seen := map[string]bool{}
	for _, key := range keys {
		if _, _, ns, _, err := yamldocs.ParseKey(key); err == nil && ns != "" && ns != skip {
			seen[ns] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// readParent reads the parent; nil when it does not exist.
func readParent(ctx context.Context, c *connection.Client, p parent) (*unstructured.Unstructured, error) {
	live, err := c.Get(ctx, p.gvk(), p.Namespace, p.Name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return live, err
}

// usableParent checks, before a set is created, that p can be its parent:
// a Secret or ConfigMap that does not exist or is this set's, or a custom
// resource that exists, of a kind whose CRD allows it, and is no other
// set's.
func usableParent(ctx context.Context, c *connection.Client, p parent) error {
	live, err := readParent(ctx, c, p)
	if err != nil {
		return err
	}
	if p.custom() {
		if live == nil {
			return fmt.Errorf("the custom resource parent %s %s does not exist. kubectl does not create a custom "+
				"resource parent, nor does the set: create it first (a k8sconnect_object the set depends on)", p.Kind, p.id())
		}
		if err := checkParentType(ctx, c, p); err != nil {
			return err
		}
	}
	return checkParent(live, p, "")
}

// checkParent refuses a parent that exists and is another tool's or
// another set's, as kubectl refuses it; adopting (the tooling of a set
// imported, until its first apply) is the one other tool's parent taken.
func checkParent(live *unstructured.Unstructured, p parent, adopting string) error {
	if live == nil {
		return nil
	}
	tooling, marked := live.GetAnnotations()[annotationTooling]
	id := live.GetLabels()[labelApplySetID]
	switch {
	case p.custom() && !marked && id == "":
		return nil // the user's custom resource, not yet any set's parent
	case !marked && id == "":
		return fmt.Errorf("the ApplySet parent %s %s exists and is not an ApplySet parent; name another parent in "+
			"applyset, or delete it if it is meant to be this set's", p.Kind, p.id())
	case !marked:
		return fmt.Errorf("the ApplySet parent %s %s lacks the %s annotation, which kubectl refuses as well", p.Kind, p.id(), annotationTooling)
	case strings.SplitN(tooling, "/", 2)[0] != toolingName && tooling != adopting:
		return fmt.Errorf("the ApplySet parent %s %s is managed by %s, not by k8sconnect. To make that set this one, "+
			"import it (terraform import <address> %s, or an import block with that id); else name another parent in "+
			"applyset", p.Kind, p.id(), tooling, p.id())
	case id != p.applySetID():
		return fmt.Errorf("the ApplySet parent %s %s has the id %q, not %q as its name makes it", p.Kind, p.id(), id, p.applySetID())
	}
	return nil
}

// parentObject is the parent as kubectl writes it for the set of keys: its
// id label, the tooling, and the group kinds and namespaces of its members.
func parentObject(p parent, version string, keys []string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": p.APIVersion, "kind": p.Kind,
		"metadata": map[string]any{"name": p.Name, "namespace": p.Namespace,
			"labels": map[string]any{labelApplySetID: p.applySetID()},
			"annotations": map[string]any{
				annotationTooling:            toolingName + "/" + version,
				annotationContainsGroupKinds: strings.Join(groupKindsOf(keys), ","),
				annotationNamespaces:         strings.Join(namespacesOf(keys, p.Namespace), ","),
			}}}}
}

// parentSays tells whether live (nil when absent) carries every label and
// annotation of want, so that writing it again would change nothing.
func parentSays(live, want *unstructured.Unstructured) bool {
	if live == nil {
		return false
	}
	for k, v := range want.GetLabels() {
		if got, ok := live.GetLabels()[k]; !ok || got != v {
			return false
		}
	}
	for k, v := range want.GetAnnotations() {
		if got, ok := live.GetAnnotations()[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// takeMarksOff removes the labels and annotations named from live, an object
// of kind gvk, by a merge patch under manager that carries live's UID, so
// that it fails with a conflict on another object of the same name.
func takeMarksOff(ctx context.Context, c *connection.Client, gvk schema.GroupVersionKind, live *unstructured.Unstructured,
	manager string, labels, annotations []string) error {
	m, err := c.Mapping(gvk)
	if err != nil {
		return err
	}
	nulls := func(keys []string) map[string]any {
		out := map[string]any{}
		for _, k := range keys {
			out[k] = nil
		}
		return out
	}
	metadata := map[string]any{"uid": live.GetUID(), "labels": nulls(labels)}
	if len(annotations) > 0 {
		metadata["annotations"] = nulls(annotations)
	}
	body, err := json.Marshal(map[string]any{"metadata": metadata})
	if err != nil {
		return err
	}
	_, err = c.Resource(m, live.GetNamespace()).Patch(ctx, live.GetName(), ktypes.MergePatchType, body,
		metav1.PatchOptions{FieldManager: manager})
	return err
}
