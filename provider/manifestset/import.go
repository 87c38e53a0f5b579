package manifestset

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/managedfields"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectset"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
	"github.com/k8sconnect/k8sconnect/provider/internal/yamldocs"
)

var _ resource.ResourceWithImportState = (*Resource)(nil)

// privateAdopting holds, from an import until the first apply, the tooling
// the imported parent named ("kubectl/v1.32.4"): that apply takes the set
// over from it.
const privateAdopting = "set_adopting"

// applySetTypes are the attribute types of applyset.
var applySetTypes = map[string]attr.Type{"name": types.StringType, "namespace": types.StringType, "kind": types.StringType,
	"api_version": types.StringType}

// ImportState takes `[<context>#]<namespace>/<name>` of an ApplySet parent,
// a Secret or ConfigMap: one `kubectl apply --prune --applyset` made, or a
// set of another configuration. Its members are found as kubectl finds
// them, by the parent's kinds and namespaces annotations and the part-of
// label, and enter objects with nothing owned yet; the first apply takes
// them over in place (ImportState's warning at plan says how). Read through
// the provider's connection when it has one and no context is named, else
// through the kubeconfig of $KUBECONFIG or ~/.kube/config, as
// k8sconnect_object imports.
func (r *Resource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	imp, ok := r.clients.ImportNamespaced(ctx, req.ID, "the set's ApplySet parent (the Secret or ConfigMap kubectl's "+
		"--applyset names)", "default/my-app", &resp.Diagnostics)
	if !ok {
		return
	}
	c := imp.Client
	p, live, err := findParent(ctx, c, imp.Namespace, imp.Name)
	if err != nil {
		resp.Diagnostics.AddError("Cannot import the set", connection.Explain(err))
		return
	}
	found, err := listMembers(ctx, c, p, live)
	if err != nil {
		resp.Diagnostics.AddError("Cannot list the set's objects", connection.Explain(err))
		return
	}
	empty := types.MapValueMust(types.StringType, nil)
	elems := make(map[string]attr.Value, len(found))
	priv := private{}
	for key, apiVersion := range found {
		elems[key] = empty
		priv[key] = privateObject{APIVersion: apiVersion}
	}
	for attrName, v := range map[string]attr.Value{"id": types.StringValue(p.id()), "applyset": p.value(),
		"applyset_id": types.StringValue(p.applySetID()), "objects": types.MapValueMust(objectset.ProjectionType, elems),
		"cluster_connection": imp.Connection} {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(attrName), v)...)
	}
	resp.Diagnostics.Append(priv.save(ctx, resp.Private)...)
	resp.Diagnostics.Append(privatestate.Save(ctx, resp.Private, privateAdopting, live.GetAnnotations()[annotationTooling])...)
}

// findParent reads the ApplySet parent ns/name, a Secret or else a
// ConfigMap, and checks that it is one: it carries the id label kubectl
// computes from its name.
func findParent(ctx context.Context, c *connection.Client, ns, name string) (parent, *unstructured.Unstructured, error) {
	for _, kind := range []string{"Secret", "ConfigMap"} {
		p := parent{APIVersion: "v1", Kind: kind, Namespace: ns, Name: name}
		live, err := readParent(ctx, c, p)
		if err != nil {
			return p, nil, err
		}
		if live == nil {
			continue
		}
		if id := live.GetLabels()[labelApplySetID]; id != p.applySetID() {
			return p, nil, fmt.Errorf("%s %s/%s is not an ApplySet parent: its %s label is %q, not %q as kubectl "+
				"computes it from its name", kind, ns, name, labelApplySetID, id, p.applySetID())
		}
		return p, live, nil
	}
	return parent{}, nil, fmt.Errorf("no Secret or ConfigMap %s/%s exists to import as the set's ApplySet parent "+
		"(kubectl get secret,configmap -l %s -A lists the parents there are)", ns, name, labelApplySetID)
}

// listMembers finds the set's objects as kubectl's prune does: each kind
// the parent's contains-group-kinds names, listed in its namespace and its
// additional-namespaces (cluster-wide for a cluster-scoped kind) by the
// part-of label. It returns their keys with their apiVersions. A kind the
// cluster no longer serves has no objects.
func listMembers(ctx context.Context, c *connection.Client, p parent, live *unstructured.Unstructured) (map[string]string, error) {
	namespaces := []string{p.Namespace}
	for _, ns := range strings.Split(live.GetAnnotations()[annotationNamespaces], ",") {
		if ns = strings.TrimSpace(ns); ns != "" && !slices.Contains(namespaces, ns) {
			namespaces = append(namespaces, ns)
		}
	}
	selector := metav1.ListOptions{LabelSelector: labelPartOf + "=" + p.applySetID()}
	found := map[string]string{}
	for _, gkText := range strings.Split(live.GetAnnotations()[annotationContainsGroupKinds], ",") {
		if gkText = strings.TrimSpace(gkText); gkText == "" {
			continue
		}
		gk := schema.ParseGroupKind(gkText)
		m, err := c.Mapping(gk.WithVersion(""))
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", gkText, err)
		}
		scopes := namespaces
		if m.Scope.Name() != meta.RESTScopeNameNamespace {
			scopes = []string{""}
		}
		for _, ns := range scopes {
			list, err := c.Resource(m, ns).List(ctx, selector)
			if err != nil {
				return nil, fmt.Errorf("listing %s: %w", gkText, err)
			}
			for _, item := range list.Items {
				found[yamldocs.Key(gk, item.GetNamespace(), item.GetName())] = item.GetAPIVersion()
			}
		}
	}
	return found, nil
}

// adoptionWarning says, at plan, what the first apply after an import does.
func adoptionWarning(id, tooling string) string {
	return fmt.Sprintf("Set %s was imported from an ApplySet of %s. This apply takes its objects over in place: they "+
		"are updated, not replaced, and keep their UIDs; the fields the tool that applied them set that the source "+
		"sets too are handed to k8sconnect, so each has one owner; objects of the imported set the source no longer "+
		"gives are pruned as below. The parent's tooling becomes k8sconnect's, after which kubectl refuses to apply "+
		"to it, as it refuses any other tool's set.", id, tooling)
}

// loadAdopting is the tooling of the set the first apply after an import
// takes over; "" when there is none.
func loadAdopting(ctx context.Context, r privatestate.Reader) string {
	tooling, _, _ := privatestate.Load[string](ctx, r, privateAdopting)
	return tooling
}

// installers are the field managers that applied live as a member of an
// ApplySet: the owners of its part-of label (kubectl's "kubectl", or
// "kubectl-client-side-apply" without --server-side), other than
// k8sconnect. A controller that owns other fields (an HPA's replicas) is
// none of them, and keeps them.
func installers(live *unstructured.Unstructured) []string {
	fields, err := managedfields.Of(live)
	if err != nil {
		return nil
	}
	label := fieldpath.MakePathOrDie("metadata", "labels", labelPartOf)
	var out []string
	for _, e := range live.GetManagedFields() {
		if e.Manager != ssa.FieldManager && !slices.Contains(out, e.Manager) && fields.Manager(e.Manager).Has(label) {
			out = append(out, e.Manager)
		}
	}
	return out
}

// saveAdopted ends an adoption: the first apply after the import is done.
func saveAdopted(ctx context.Context, w privatestate.Writer) diag.Diagnostics {
	return w.SetKey(ctx, privateAdopting, nil)
}
