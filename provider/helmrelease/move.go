package helmrelease

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectset"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
)

// Moving a release in from hashicorp/helm.
//
// A `moved` block from hashicorp/helm's helm_release turns its state into
// this one's as ImportState does: the release is named by the namespace and
// name the source recorded, nothing is read or written in the cluster, and
// the release is marked for adoption, so the first apply takes its objects
// over in place and writes the next revision of the same history.

var _ resource.ResourceWithMoveState = (*Resource)(nil)

// helmReleaseSource is the resource type a moved block may bring in, and the
// type (last element of the address) of the provider that has it.
const (
	helmReleaseSource = "helm_release"
	helmProviderType  = "helm"
)

// MoveState takes over the state of hashicorp/helm's helm_release: every
// schema version of it (1 in 2.x, 2 in 3.x) has name and namespace at the
// top level, and that is all the move reads.
func (r *Resource) MoveState(context.Context) []resource.StateMover {
	return []resource.StateMover{{StateMover: r.moveState}}
}

func (r *Resource) moveState(ctx context.Context, req resource.MoveStateRequest, resp *resource.MoveStateResponse) {
	addr := req.SourceProviderAddress
	if req.SourceTypeName != helmReleaseSource || addr[strings.LastIndex(addr, "/")+1:] != helmProviderType {
		resp.Diagnostics.AddError("Cannot move this resource into k8sconnect_helm_release",
			fmt.Sprintf("k8sconnect_helm_release takes over the state of helm_release (hashicorp/helm provider); %s of %s "+
				"is not one. Import the release instead: an import block with id <namespace>/<name>, e.g. "+
				"monitoring/prometheus.", req.SourceTypeName, addr))
		return
	}
	if req.SourceRawState == nil {
		resp.Diagnostics.AddError("Cannot read the moved state",
			fmt.Sprintf("The moved helm_release (%s) has no state to take over.", addr))
		return
	}
	ns, name, err := movedRelease(req.SourceRawState.JSON)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the moved state",
			fmt.Sprintf("The state of helm_release (%s, schema version %d) %v. Import the release instead: an import "+
				"block with id <namespace>/<name>.", addr, req.SourceSchemaVersion, err))
		return
	}
	for attr, v := range map[string]any{"id": types.StringValue(releaseID(ns, name)), "name": types.StringValue(name),
		"namespace": types.StringValue(ns), "objects": types.MapValueMust(objectset.ProjectionType, nil),
		"cluster_connection": types.ObjectNull(connection.AttrTypes)} {
		resp.Diagnostics.Append(resp.TargetState.SetAttribute(ctx, path.Root(attr), v)...)
	}
	resp.Diagnostics.Append(privatestate.Save(ctx, resp.TargetPrivate, privateAdopting, true)...)
}

// movedRelease reads the release's namespace and name from a helm_release
// state; an error says what is missing or wrong.
func movedRelease(state []byte) (namespace, name string, err error) {
	var s struct {
		Name      *string `json:"name"`
		Namespace *string `json:"namespace"`
	}
	if err := json.Unmarshal(state, &s); err != nil {
		return "", "", fmt.Errorf("is not a JSON object: %v", err)
	}
	var missing []string
	if s.Name == nil || *s.Name == "" {
		missing = append(missing, "name")
	}
	if s.Namespace == nil || *s.Namespace == "" {
		missing = append(missing, "namespace")
	}
	if len(missing) > 0 {
		return "", "", fmt.Errorf("has no %s, so the release it manages is not known", strings.Join(missing, " and no "))
	}
	for attr, v := range map[string]string{"name": *s.Name, "namespace": *s.Namespace} {
		if strings.Contains(v, "/") {
			return "", "", fmt.Errorf("has %s %q, which is not a release %s", attr, v, attr)
		}
	}
	return *s.Namespace, *s.Name, nil
}
