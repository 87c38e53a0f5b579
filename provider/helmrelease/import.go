package helmrelease

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

var _ resource.ResourceWithImportState = (*Resource)(nil)

// privateAdopting marks a release imported from another tool and not yet
// applied: its first apply takes its objects over in place and then hands
// over the fields Helm's field manager held, so each has one owner.
const privateAdopting = "release_adopting"

// helmManager tells the field managers Helm writes under: "helm" for the
// helm CLI (Helm 3 and 4, either apply method), and, where the program sets
// no name, the base name of the binary that links Helm's library, which for
// hashicorp/helm is terraform-provider-helm_v<version>_x5.
func helmManager(name string) bool {
	return name == "helm" || strings.HasPrefix(name, "terraform-provider-helm")
}

// ImportState takes `[<context>#]<namespace>/<name>` of a release made by
// helm (3 or 4, client- or server-side apply) or by an earlier configuration.
// It is read through the provider's connection when it has one and no
// context is named, else through the kubeconfig of $KUBECONFIG or
// ~/.kube/config, as k8sconnect_object imports. The first apply adopts its
// objects.
func (r *Resource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	kubeContext, rest := connection.SplitImportID(req.ID)
	ns, name, ok := strings.Cut(rest, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		resp.Diagnostics.AddError("Invalid import id",
			fmt.Sprintf("%q is not [<context>#]<namespace>/<name>: give the release's namespace and name, e.g. "+
				"monitoring/prometheus.", req.ID))
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
	history, err := newRecords(c, ns, 0).history(name)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the release to import", connection.Explain(err))
		return
	}
	if len(history) == 0 {
		resp.Diagnostics.AddError("Release not found",
			fmt.Sprintf("No release %s has records in namespace %s (helm list -n %s shows what there is), so there "+
				"is nothing to import.", name, ns, ns))
		return
	}
	connObj, diags := connection.Imported(ctx, conn, useDefault)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	for attr, v := range map[string]any{"id": types.StringValue(releaseID(ns, name)), "name": types.StringValue(name),
		"namespace": types.StringValue(ns), "objects": types.MapValueMust(projectionType, nil), "cluster_connection": connObj} {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(attr), v)...)
	}
	resp.Diagnostics.Append(privatestate.Save(ctx, resp.Private, privateAdopting, true)...)
}

func adopting(ctx context.Context, r privatestate.Reader) bool {
	v, _, _ := privatestate.Load[bool](ctx, r, privateAdopting)
	return v
}

// adoptionWarning tells, at plan time, what the first apply after an import does.
func adoptionWarning(id string) string {
	return fmt.Sprintf("Release %s was imported or moved in. This apply takes its objects over in place: they are updated, "+
		"not replaced, and keep their UIDs. The fields Helm's field manager set that this chart sets too are handed "+
		"to k8sconnect, so each has one owner; fields only Helm set are left as they are. The release keeps its "+
		"history, and this apply writes its next revision.", id)
}

// takeOverAll hands the fields of helm's managers over to k8sconnect in
// every applied object, each retried while someone writes in between.
func takeOverAll(ctx context.Context, c *connection.Client, applied map[string]*unstructured.Unstructured) error {
	for key, obj := range applied {
		var managers []string
		for _, e := range obj.GetManagedFields() {
			if helmManager(e.Manager) && !slices.Contains(managers, e.Manager) {
				managers = append(managers, e.Manager)
			}
		}
		if len(managers) == 0 {
			continue
		}
		err := retryConflicts(func() error {
			out, err := ssa.TakeOver(ctx, c, obj, managers)
			if err == nil {
				applied[key] = out
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("%s: handing Helm's fields over: %w", key, err)
		}
	}
	return nil
}

// retryConflicts runs a read-modify-write of managedFields (ssa.TakeOver,
// ssa.HandOver) again when someone wrote the object in between (409), a few
// times: the object is ours, so the writes that race with us are a
// controller's status updates, which do not last.
func retryConflicts(f func() error) error {
	err := f()
	for attempt := 1; attempt < 5 && apierrors.IsConflict(err); attempt++ {
		time.Sleep(200 * time.Millisecond)
		err = f()
	}
	return err
}
