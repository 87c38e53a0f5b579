package helmrelease_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// atomicConfig is a release of the atomic chart with more arguments.
func atomicConfig(t *testing.T, ns, name, more string) string {
	return fmt.Sprintf(`
resource "k8sconnect_helm_release" "app" {
  name      = %q
  namespace = %q
  chart     = %q
  %s
  %s
}
`, name, ns, chartPath(t, "atomic"), acctest.Connection(t), more)
}

// podTemplateAnnotations are the annotations of a Deployment's pod template.
func podTemplateAnnotations(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	d := acctest.MustGet(t, deployments, ns, name)
	ann, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "annotations")
	return ann
}

// errorOf is the one error diagnostic of a failed run, summary and detail.
func errorOf(t *testing.T, r acctest.Result) (summary, detail string) {
	t.Helper()
	errs := r.Errors()
	if len(errs) != 1 {
		t.Fatalf("want one error, got %d: %+v\n%s", len(errs), errs, r.Output)
	}
	return errs[0].Summary, errs[0].Detail
}

// An upgrade that fails under atomic (its readiness wait times out) is
// rolled back by the real engine's run, which still fails and says both:
// the values and objects of revision 1 are back (the objects that existed
// keep their UIDs, the one the failed upgrade deleted is there again), the
// object the upgrade created is gone but the one marked keep stays, and a
// revision 3 "Rollback to 1" is deployed, with the rolled-back revision's
// post-rollback hook run. The state then plans no change for revision 1's
// configuration. A pre-upgrade hook the server refuses, quoting a
// set_sensitive value, is rolled back too, and the value is in no output.
func TestAccHelmReleaseAtomicRollsBackAFailedUpgrade(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "atomic"
	w := acctest.NewWorkdir(t)
	w.Cleanup()
	const base = "atomic  = true\n  timeout = \"15s\""
	w.Write(atomicConfig(t, ns, name, base))
	w.MustApply()
	settings, app, dropped := name+"-settings", name+"-app", name+"-dropped"
	settingsUID, appUID := acctest.UID(t, configMaps, ns, settings), acctest.UID(t, deployments, ns, app)

	w.Write(atomicConfig(t, ns, name, base+`
  set = [{ name = "greeting", value = "bonjour" }, { name = "holdPods", value = "true" },
         { name = "added", value = "true" }, { name = "dropped", value = "false" }]`))
	r := w.Apply()
	w.MustFail(r, "apply of an upgrade that never becomes ready, under atomic")
	summary, detail := errorOf(t, r)
	if summary != "Release not ready; rolled back to revision 1" {
		t.Errorf("the error's summary should say what failed and that it was rolled back, got %q", summary)
	}
	for _, want := range []string{
		"apps/Deployment/" + ns + "/" + app + " is not ready",
		`atomic: the upgrade (revision 2, marked failed) was rolled back to revision 1. Revision 3, which helm history shows as "Rollback to 1"`,
		"Deleted, as the upgrade created them: core/ConfigMap/" + ns + "/" + name + "-added, core/ConfigMap/" + ns + "/" + name + "-added-existing.",
		"Kept, as helm.sh/resource-policy: keep asks: core/ConfigMap/" + ns + "/" + name + "-added-kept.",
	} {
		if !strings.Contains(detail, want) {
			t.Errorf("the error should say %q:\n%s", want, detail)
		}
	}
	for _, check := range []acctest.ClusterCheck{
		configMapData(t, ns, settings, "greeting", "hello"),
		present(t, configMaps, ns, name+"-added", false),
		present(t, configMaps, ns, name+"-added-kept", true),
		present(t, configMaps, ns, name+"-added-existing", false),
		present(t, configMaps, ns, dropped, true),
		configMapData(t, ns, name+"-rolled-back", "revision", "1"),
		records(t, ns, name, map[string]string{"v1": "superseded", "v2": "failed", "v3": "deployed"}),
		described(t, ns, name, 3, "Rollback to 1"),
	} {
		if err := check(); err != nil {
			t.Error(err)
		}
	}
	if got := acctest.UID(t, configMaps, ns, settings); got != settingsUID {
		t.Errorf("the rollback replaced %s: UID %s -> %s", settings, settingsUID, got)
	}
	if got := acctest.UID(t, deployments, ns, app); got != appUID {
		t.Errorf("the rollback replaced %s: UID %s -> %s", app, appUID, got)
	}
	if ann := podTemplateAnnotations(t, ns, app); ann["k8sconnect.test/hold"] != "" {
		t.Errorf("the rollback left the failed upgrade's pod template: annotations %v", ann)
	}
	if desc := helmHistory(t, ns, name)[2]; !strings.Contains(desc, "is not ready") {
		t.Errorf("helm history should describe revision 2 by its failure, got %q", desc)
	}
	if got := w.StateAttribute("k8sconnect_helm_release.app", "revision"); got != "3" {
		t.Errorf("revision in state after the rollback = %s, want 3", got)
	}
	if got := w.StateAttribute("k8sconnect_helm_release.app", "status"); got != "deployed" {
		t.Errorf("status in state after the rollback = %s, want deployed", got)
	}
	// The cluster is revision 1's again: its configuration plans nothing.
	w.Write(atomicConfig(t, ns, name, base))
	w.MustPlanNoChanges()

	// A hook the server refuses, quoting a set_sensitive value.
	token := acctest.NewSecretValue("token")
	w.Write(atomicConfig(t, ns, name, base+fmt.Sprintf(`
  set           = [{ name = "greeting", value = "hola" }]
  set_sensitive = [{ name = "token", value = %q }]`, token.Plain)))
	r = w.Apply()
	w.MustFail(r, "apply of an upgrade whose pre-upgrade hook is refused, under atomic")
	summary, detail = errorOf(t, r)
	if summary != "Hook failed; rolled back to revision 3" || !strings.Contains(detail, "pre-upgrade hook core/ConfigMap/"+ns+"/"+name+"-checked failed") {
		t.Errorf("the error should name the refused hook and the rollback: %q\n%s", summary, detail)
	}
	acctest.ExpectPresent(t, "the error", detail, "(sensitive value hidden)!") // the server quoted it
	acctest.ExpectAbsent(t, "the failed apply's output", r.Output, token)
	if err := configMapData(t, ns, settings, "greeting", "hello")(); err != nil {
		t.Error(err)
	}
	if err := records(t, ns, name, map[string]string{"v1": "superseded", "v2": "failed", "v3": "superseded",
		"v4": "failed", "v5": "deployed"})(); err != nil {
		t.Error(err)
	}
	if err := described(t, ns, name, 5, "Rollback to 3")(); err != nil {
		t.Error(err)
	}
}

// An install that fails under atomic is uninstalled: no object, no record
// and no state are left (the next plan installs revision 1 again), where
// without atomic the failed record and the objects stay for the next apply
// to take up.
func TestAccHelmReleaseAtomicUninstallsAFailedInstall(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "undone"
	gone := func() error {
		for _, c := range []acctest.ClusterCheck{
			present(t, configMaps, ns, name+"-settings", false),
			present(t, configMaps, ns, name+"-dropped", false),
			present(t, deployments, ns, name+"-app", false),
			records(t, ns, name, map[string]string{}),
		} {
			if err := c(); err != nil {
				return err
			}
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{
				Config: atomicConfig(t, ns, name, "atomic = true\n  wait = false\n  timeout = \"5s\"\n  "+
					`set = [{ name = "holdPods", value = "true" }]`),
				ExpectError: regexp.MustCompile(`(?s)Release not ready; the install was undone.*apps/Deployment/` + ns + `/` + name +
					`-app\s+is\s+not\s+ready.*atomic:\s+the\s+install\s+was\s+undone.*release\s+` + ns + `/` + name + `\s+is\s+gone`),
			},
			{
				PreConfig: func() {
					if err := gone(); err != nil {
						t.Errorf("after the failed install under atomic: %v", err)
					}
				},
				Config: atomicConfig(t, ns, name, "atomic = true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("k8sconnect_helm_release.app", plancheck.ResourceActionCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("revision"), knownvalue.Int64Exact(1)),
					records(t, ns, name, map[string]string{"v1": "deployed"}),
				},
			},
		},
	})
}

// cleanup_on_fail deletes what a failed upgrade created and nothing else:
// not an object marked keep, not one of the new objects that existed before
// the upgrade (left by an earlier run, carrying the release's marks), not
// the objects the upgrade changed, which keep its values, and the revision
// stays failed; the next apply runs the upgrade again.
func TestAccHelmReleaseCleanupOnFail(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "cleaned"
	const base = "cleanup_on_fail = true\n  timeout = \"10s\""
	failing := base + `
  set = [{ name = "greeting", value = "bonjour" }, { name = "holdPods", value = "true" }, { name = "added", value = "true" }]`
	var settingsUID, existingUID string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{Config: atomicConfig(t, ns, name, base)},
			{
				PreConfig: func() {
					settingsUID = acctest.UID(t, configMaps, ns, name+"-settings")
					existing := acctest.ApplyAs(t, "helm", configMaps, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s-added-existing, "+
						"namespace: %s, annotations: {meta.helm.sh/release-name: %s, meta.helm.sh/release-namespace: %s}, "+
						"labels: {app.kubernetes.io/managed-by: Helm}}\ndata: {note: left by an earlier run}\n", name, ns, name, ns))
					existingUID = string(existing.GetUID())
				},
				Config: atomicConfig(t, ns, name, failing),
				ExpectError: regexp.MustCompile(`(?s)Release not ready; the objects it created deleted.*cleanup_on_fail:\s+deleted\s+the\s+objects\s+` +
					`this\s+upgrade\s+created:\s+core/ConfigMap/` + ns + `/` + name + `-added\.\s+Kept,\s+as\s+helm\.sh/resource-policy:\s+keep\s+` +
					`asks:\s+core/ConfigMap/` + ns + `/` + name + `-added-kept\.\s+The\s+revision\s+stays\s+failed`),
			},
			{
				PreConfig: func() {
					for _, c := range []acctest.ClusterCheck{
						present(t, configMaps, ns, name+"-added", false),
						present(t, configMaps, ns, name+"-added-kept", true),
						configMapData(t, ns, name+"-added-existing", "note", "comes with added=true"),
						configMapData(t, ns, name+"-settings", "greeting", "bonjour"), // not rolled back
						records(t, ns, name, map[string]string{"v1": "deployed", "v2": "failed"}),
					} {
						if err := c(); err != nil {
							t.Error(err)
						}
					}
					if got := acctest.UID(t, configMaps, ns, name+"-added-existing"); got != existingUID {
						t.Errorf("the object that existed before the upgrade was deleted: UID %s -> %s", existingUID, got)
					}
					if got := acctest.UID(t, configMaps, ns, name+"-settings"); got != settingsUID {
						t.Errorf("the settings were replaced: UID %s -> %s", settingsUID, got)
					}
				},
				// The pods released: the upgrade runs again, and goes through.
				Config: atomicConfig(t, ns, name, base+`
  set = [{ name = "greeting", value = "bonjour" }, { name = "added", value = "true" }]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("k8sconnect_helm_release.app", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					present(t, configMaps, ns, name+"-added", true),
					records(t, ns, name, map[string]string{"v1": "superseded", "v2": "failed", "v3": "deployed"}),
				},
			},
		},
	})
}
