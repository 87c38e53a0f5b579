package manifestset

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectplan"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
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
	Kind, Namespace, Name string
}

func (p parent) id() string { return p.Namespace + "/" + p.Name }

// applySetID is the ApplySet's id: "applyset-" + the unpadded URL-safe
// base64 of sha256 of "<name>.<namespace>.<kind>.<group>", + "-v1".
func (p parent) applySetID() string {
	sum := sha256.Sum256([]byte(strings.Join([]string{p.Name, p.Namespace, p.Kind, ""}, ".")))
	return "applyset-" + base64.RawURLEncoding.EncodeToString(sum[:]) + "-v1"
}

// parentOf is the parent m names or, for a set that names none, the default
// one of its members: kept in state (id) once created.
func parentOf(m *model, state *model, ms *members) parent {
	if !m.ApplySet.IsNull() && !m.ApplySet.IsUnknown() {
		attrs := m.ApplySet.Attributes()
		p := parent{Kind: "Secret", Namespace: namespaceOf(m)}
		if v, ok := attrs["name"].(interface{ ValueString() string }); ok {
			p.Name = v.ValueString()
		}
		if v, ok := attrs["namespace"].(interface{ ValueString() string }); ok && v.ValueString() != "" {
			p.Namespace = v.ValueString()
		}
		if v, ok := attrs["kind"].(interface{ ValueString() string }); ok && v.ValueString() != "" {
			p.Kind = v.ValueString()
		}
		return p
	}
	if state != nil && state.ID.ValueString() != "" {
		ns, name, _ := strings.Cut(state.ID.ValueString(), "/")
		return parent{Kind: "Secret", Namespace: ns, Name: name}
	}
	return parent{Kind: "Secret", Namespace: namespaceOf(m), Name: defaultParentName(ms)}
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
		if group == "core" {
			group = ""
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
	live, err := c.Get(ctx, schema.GroupVersionKind{Version: "v1", Kind: p.Kind}, p.Namespace, p.Name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return live, err
}

// checkParent refuses a parent that exists and is another tool's or
// another set's, as kubectl refuses it.
func checkParent(live *unstructured.Unstructured, p parent) error {
	if live == nil {
		return nil
	}
	tooling, marked := live.GetAnnotations()[annotationTooling]
	id := live.GetLabels()[labelApplySetID]
	switch {
	case !marked && id == "":
		return fmt.Errorf("the ApplySet parent %s %s exists and is not an ApplySet parent; name another parent in "+
			"applyset, or delete it if it is meant to be this set's", p.Kind, p.id())
	case !marked:
		return fmt.Errorf("the ApplySet parent %s %s lacks the %s annotation, which kubectl refuses as well", p.Kind, p.id(), annotationTooling)
	case strings.SplitN(tooling, "/", 2)[0] != toolingName:
		return fmt.Errorf("the ApplySet parent %s %s is managed by %s, not by k8sconnect; name another parent in applyset",
			p.Kind, p.id(), tooling)
	case id != p.applySetID():
		return fmt.Errorf("the ApplySet parent %s %s has the id %q, not %q as its name makes it", p.Kind, p.id(), id, p.applySetID())
	}
	return nil
}

// writeParent applies the parent's marks, listing the kinds and namespaces
// of keys, as kubectl does before it applies (the superset of the last set
// and this one) and after it prunes (this one).
func writeParent(ctx context.Context, c *connection.Client, p parent, version string, keys []string) error {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": p.Kind,
		"metadata": map[string]any{"name": p.Name, "namespace": p.Namespace,
			"labels": map[string]any{labelApplySetID: p.applySetID()},
			"annotations": map[string]any{
				annotationTooling:            toolingName + "/" + version,
				annotationContainsGroupKinds: strings.Join(groupKindsOf(keys), ","),
				annotationNamespaces:         strings.Join(namespacesOf(keys, p.Namespace), ","),
			}}}}
	_, err := ssa.Apply(ctx, c, obj, ssa.Options{FieldManager: parentFieldManager})
	return err
}
