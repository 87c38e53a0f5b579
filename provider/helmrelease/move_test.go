package helmrelease_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/otherproviders"
	"github.com/k8sconnect/k8sconnect/provider/helmrelease"
)

// helmReleaseState is the state hashicorp/helm 3.x (schema version 2)
// records for a release of the lifecycle chart installed from a local path
// with set, every attribute present as its state file has it.
func helmReleaseState(chart, ns, name string, set []map[string]any) map[string]any {
	return map[string]any{
		"id": name, "name": name, "namespace": ns, "chart": chart, "version": "1.2.0", "status": "deployed",
		"description": nil, "devel": nil, "keyring": nil, "repository": nil, "repository_ca_file": nil,
		"repository_cert_file": nil, "repository_key_file": nil, "repository_password": nil, "repository_username": nil,
		"manifest": nil, "resources": nil, "values": nil, "set": set, "set_list": nil, "set_sensitive": nil,
		"set_wo_revision": nil, "postrender": nil, "timeouts": nil, "max_history": 0, "timeout": 300,
		"metadata": map[string]any{
			"app_version": "3.1", "chart": "lifecycle", "first_deployed": 1764150000, "last_deployed": 1764150000,
			"name": name, "namespace": ns, "notes": "", "revision": 1, "version": "1.2.0",
			"values": `{"greeting":"hi","keep":false}`,
		},
		"atomic": false, "cleanup_on_fail": false, "create_namespace": false, "dependency_update": false,
		"disable_crd_hooks": false, "disable_openapi_validation": false, "disable_webhooks": false, "force_update": false,
		"lint": false, "pass_credentials": false, "recreate_pods": false, "render_subchart_notes": true, "replace": false,
		"reset_values": false, "reuse_values": false, "skip_crds": false, "take_ownership": false, "upgrade_install": false,
		"verify": false, "wait": true, "wait_for_jobs": false,
	}
}

// A release that hashicorp/helm's helm_release manages is moved into
// k8sconnect_helm_release with a moved block and taken over in place, as an
// import takes it: the plan updates (never replaces) and warns, the apply
// keeps every object's UID, writes revision 2 of the same history (v1
// superseded, v2 deployed, helm history showing both), hands helm's fields
// over, and the next plan is empty.
func TestAccHelmReleaseMovedFromHashicorpHelm(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "moved"
	chart := chartPath(t, "lifecycle")
	// The release as hashicorp/helm would have installed it (the same Helm
	// library, its history in the same Secrets); the pinned helm CLI stands in.
	helmCLI(t, "install", name, chart, "-n", ns, "--set", "greeting=hi", "--set", "keep=false", "--server-side=false")
	uid := acctest.UID(t, configMaps, ns, name+"-settings")
	appUID := acctest.UID(t, deployments, ns, name+"-app")

	w := acctest.NewWorkdir(t)
	w.UseStandIn(otherproviders.Helm)
	w.WriteState(otherproviders.Helm.Address, otherproviders.Helm.Resource, "app", otherproviders.Helm.Version,
		helmReleaseState(chart, ns, name, []map[string]any{
			{"name": "greeting", "value": "hi", "type": ""}, {"name": "keep", "value": "false", "type": ""},
		}))
	// hashicorp/helm connects in its provider block; so does this
	// configuration, and the moved release, which records no connection of
	// its own, is read and applied through it.
	w.Write(releaseThroughProvider(t, ns, name, `
moved {
  from = helm_release.app
  to   = k8sconnect_helm_release.app
}
`))
	w.Cleanup()

	plan := w.Plan()
	if plan.Err != nil {
		t.Fatalf("%s plan of the move failed: %v\n%s", acctest.Engine(), plan.Err, plan.Output)
	}
	if add, change, remove := plan.Changes(); add != 0 || remove != 0 || change != 1 {
		t.Fatalf("the move planned +%d ~%d -%d; want one update in place\n%s", add, change, remove, plan.Output)
	}
	warned := false
	for _, d := range plan.Warnings() {
		warned = warned || (d.Summary == "Taking over a release made elsewhere" && strings.Contains(d.Detail, ns+"/"+name))
	}
	if !warned {
		t.Errorf("the plan does not warn that it takes the release over\n%s", plan.Output)
	}

	w.MustApply()
	if got := acctest.UID(t, configMaps, ns, name+"-settings"); got != uid {
		t.Errorf("the ConfigMap was replaced: UID %s -> %s", uid, got)
	}
	if got := acctest.UID(t, deployments, ns, name+"-app"); got != appUID {
		t.Errorf("the Deployment was replaced: UID %s -> %s", appUID, got)
	}
	if got := w.StateAttribute("k8sconnect_helm_release.app", "revision"); got != "2" {
		t.Errorf("revision %s after the move's apply, want 2", got)
	}
	if got := w.StateList(); fmt.Sprint(got) != "[k8sconnect_helm_release.app]" {
		t.Errorf("state holds %v, want only k8sconnect_helm_release.app", got)
	}
	for _, check := range []acctest.ClusterCheck{
		records(t, ns, name, map[string]string{"v1": "superseded", "v2": "deployed"}),
		configMapData(t, ns, name+"-settings", "greeting", "hi"),
	} {
		if err := check(); err != nil {
			t.Error(err)
		}
	}
	cm := acctest.MustGet(t, configMaps, ns, name+"-settings")
	for _, e := range cm.GetManagedFields() {
		if e.Manager == "helm" && e.FieldsV1 != nil && strings.Contains(e.FieldsV1.GetRawString(), "f:greeting") {
			t.Errorf("helm's field manager still holds data.greeting: %s", e.FieldsV1.GetRawString())
		}
	}
	if h := helmCLI(t, "history", name, "-n", ns); !strings.Contains(h, "Upgrade complete") || strings.Count(strings.TrimSpace(h), "\n") != 2 {
		t.Errorf("helm history after the move:\n%s", h)
	}
	w.MustPlanNoChanges()
}

// moveState runs k8sconnect_helm_release's state mover on a source state.
func moveState(t *testing.T, providerAddr, typeName string, state map[string]any) *fwresource.MoveStateResponse {
	t.Helper()
	ctx := context.Background()
	r := helmrelease.New()
	var sch fwresource.SchemaResponse
	r.Schema(ctx, fwresource.SchemaRequest{}, &sch)
	raw, err := json.Marshal(state)
	if err != nil {
		t.Fatal(err)
	}
	movers := r.(fwresource.ResourceWithMoveState).MoveState(ctx)
	if len(movers) != 1 {
		t.Fatalf("%d state movers, want 1", len(movers))
	}
	resp := &fwresource.MoveStateResponse{TargetState: tfsdk.State{
		Schema: sch.Schema, Raw: tftypes.NewValue(sch.Schema.Type().TerraformType(ctx), nil),
	}}
	movers[0].StateMover(ctx, fwresource.MoveStateRequest{
		SourceProviderAddress: providerAddr, SourceTypeName: typeName, SourceSchemaVersion: 2,
		SourceRawState: &tfprotov6.RawState{JSON: raw},
	}, resp)
	return resp
}

// A moved state that does not name its release, or a resource that is not
// hashicorp/helm's helm_release, is refused with what is wrong.
func TestHelmReleaseMoveRefuses(t *testing.T) {
	const helm = "registry.terraform.io/hashicorp/helm"
	noNamespace := helmReleaseState("./chart", "", "web", nil)
	delete(noNamespace, "namespace")
	for _, tc := range []struct {
		name, addr, typ string
		state           map[string]any
		want            []string
	}{
		{"no namespace", helm, "helm_release", noNamespace, []string{"has no namespace"}},
		{"no name", helm, "helm_release", helmReleaseState("./chart", "prod", "", nil), []string{"has no name"}},
		{"neither", helm, "helm_release", map[string]any{"chart": "./chart"}, []string{"has no name and no namespace"}},
		{"another resource", "registry.terraform.io/hashicorp/kubernetes", "kubernetes_manifest", map[string]any{},
			[]string{"kubernetes_manifest", "is not one", "import block"}},
		{"another provider's helm_release", "registry.terraform.io/example/other", "helm_release",
			helmReleaseState("./chart", "prod", "web", nil), []string{"registry.terraform.io/example/other", "is not one"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := moveState(t, tc.addr, tc.typ, tc.state)
			if !resp.Diagnostics.HasError() {
				t.Fatalf("the move was accepted")
			}
			detail := resp.Diagnostics.Errors()[0].Detail()
			for _, w := range tc.want {
				if !strings.Contains(detail, w) {
					t.Errorf("the error does not say %q:\n%s", w, detail)
				}
			}
		})
	}
}
