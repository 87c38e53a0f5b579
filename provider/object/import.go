package object

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/resourceref"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
)

var _ resource.ResourceWithImportState = (*Resource)(nil)

// ImportState takes an id of the form
//
//	[<context>#]<apiVersion>/<kind>/[<namespace>/]<name>
//
// e.g. "apps/v1/Deployment/prod/web", "v1/Namespace/prod" or
// "staging#v1/ConfigMap/default/settings". The id carries no credentials: the
// object is read through the provider block's cluster_connection when it has
// one and the id names no context, else through the kubeconfig files named by
// $KUBECONFIG (all of them, merged as kubectl does) or ~/.kube/config, and the
// context given, else its current-context. State records the path, never the
// kubeconfig's content. A Secret's values are not exported. The first
// apply with the configuration's own cluster_connection then takes ownership of
// the fields in yaml_body.
func (r *Resource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	kubeContext, id, err := ParseImportID(req.ID)
	if err != nil {
		resp.Diagnostics.AddError("Invalid import id", err.Error())
		return
	}
	conn, useDefault, err := r.clients.ForImport(kubeContext)
	if err != nil {
		resp.Diagnostics.AddError("No kubeconfig to import with", err.Error())
		return
	}
	c, err := r.clients.Client(ctx, conn)
	if err != nil {
		resp.Diagnostics.AddError("Cannot connect for import", err.Error())
		return
	}
	live, err := get(ctx, c, id)
	if apierrors.IsNotFound(err) {
		resp.Diagnostics.AddError("Object not found", fmt.Sprintf("%s does not exist in the cluster, so there is nothing to import.", id))
		return
	}
	if meta.IsNoMatchError(err) {
		if missing := c.MissingCoreKind(id.GVK()); missing != nil {
			err = missing // a typo, or a discovery that fails: say which
		}
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the object to import", fmt.Sprintf("Reading %s: %v\n\n%s", id, err, connection.Remedy(err)))
		return
	}
	body, err := cleanManifest(live)
	if err != nil {
		resp.Diagnostics.AddError("Cannot render the imported object", err.Error())
		return
	}
	if sensitive.IsSecret(id.APIVersion, id.Kind) {
		resp.Diagnostics.AddWarning("The Secret's values were not imported",
			fmt.Sprintf("yaml_body of %s holds the placeholder %q in place of every value of data and stringData, "+
				"so none reaches state or a file written by -generate-config-out. Give the Secret with its real "+
				"values (from a variable or a secret store) as yaml_body_wo, which is kept out of state and plans, "+
				"before you apply: a plan with a placeholder left is refused.", id, SecretPlaceholder))
	}
	connObj, diags := connection.Imported(ctx, conn, useDefault)
	resp.Diagnostics.Append(diags...)
	ref, diags := resourceref.Value(ctx, id, types.StringValue(live.GetNamespace()), connObj)
	resp.Diagnostics.Append(diags...)
	for attr, v := range map[string]any{
		"id": types.StringValue(importedID(live)), "yaml_body": types.StringValue(body),
		"cluster_connection": connObj, "resource_ref": ref,
	} {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(attr), v)...)
	}
}

// ImportID is the import id of an object read through the current context.
func ImportID(id manifest.Identity) string {
	if id.Namespace == "" {
		return id.APIVersion + "/" + id.Kind + "/" + id.Name
	}
	return id.APIVersion + "/" + id.Kind + "/" + id.Namespace + "/" + id.Name
}

// ParseImportID splits an import id into its optional context and the object.
func ParseImportID(s string) (kubeContext string, id manifest.Identity, err error) {
	kubeContext, rest := connection.SplitImportID(s)
	parts := strings.Split(rest, "/")
	kindAt := -1
	for i, p := range parts {
		if i > 0 && p != "" && unicode.IsUpper(rune(p[0])) {
			kindAt = i
			break
		}
	}
	usage := fmt.Errorf("import id %q must be [<context>#]<apiVersion>/<kind>/[<namespace>/]<name>, "+
		"e.g. apps/v1/Deployment/prod/web or v1/Namespace/prod", s)
	if kindAt < 1 || kindAt > 2 {
		return "", id, usage
	}
	id.APIVersion, id.Kind = strings.Join(parts[:kindAt], "/"), parts[kindAt]
	switch after := parts[kindAt+1:]; len(after) {
	case 1:
		id.Name = after[0]
	case 2:
		id.Namespace, id.Name = after[0], after[1]
	default:
		return "", id, usage
	}
	if id.Name == "" {
		return "", id, usage
	}
	return kubeContext, id, nil
}

// cleanManifest renders a live object as the yaml_body a user would write:
// without status, server-set metadata, kubectl's last-applied copy or our own
// bookkeeping annotations.
func cleanManifest(live *unstructured.Unstructured) (string, error) {
	obj := live.DeepCopy()
	delete(obj.Object, "status")
	for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink",
		"deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences"} {
		unstructured.RemoveNestedField(obj.Object, "metadata", f)
	}
	if sensitive.IsSecret(obj.GetAPIVersion(), obj.GetKind()) {
		for _, field := range []string{"data", "stringData"} {
			if m, ok := obj.Object[field].(map[string]any); ok {
				for k := range m {
					m[k] = SecretPlaceholder
				}
			}
		}
	}
	annotations := obj.GetAnnotations()
	for _, a := range []string{"kubectl.kubernetes.io/last-applied-configuration", annotationOwnedBy, annotationCreatePending,
		"deployment.kubernetes.io/revision"} {
		delete(annotations, a)
	}
	if len(annotations) == 0 {
		unstructured.RemoveNestedField(obj.Object, "metadata", "annotations")
	} else {
		obj.SetAnnotations(annotations)
	}
	b, err := yaml.Marshal(obj.Object)
	return string(b), err
}

// importedID keeps the id an object already carries, so that importing an
// object a k8sconnect resource created (a create whose engine was killed
// before it recorded state, or a move between states) continues that
// resource instead of looking like a second one; an object k8sconnect never
// managed gets a new id.
func importedID(live *unstructured.Unstructured) string {
	if id := live.GetAnnotations()[annotationOwnedBy]; id != "" {
		return id
	}
	return newID()
}

// SecretPlaceholder stands for every value of an imported Secret in the
// yaml_body that import records (and -generate-config-out writes). It is not
// base64, and a plan that still holds it is refused, so it can never be
// applied by mistake.
const SecretPlaceholder = "<k8sconnect: replace with the value; import does not export Secret values>"
