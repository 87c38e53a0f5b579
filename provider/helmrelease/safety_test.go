package helmrelease_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// An install whose readiness wait times out fails the run but taints
// nothing: no state is kept, the failed record stays, and the next apply
// takes the same release up again (revision 2), with the same objects, same
// UIDs, instead of uninstalling and installing.
func TestAccHelmReleaseFailedInstallIsResumedNotRecreated(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "resume"
	var uid string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{
				Config: strings.Replace(releaseConfig(t, ns, name, `set = [{ name = "holdPods", value = "true" }]`),
					`timeout   = "60s"`, `timeout   = "5s"`, 1),
				ExpectError: regexp.MustCompile(`(?s)Release not ready.*apps/Deployment/` + ns + `/` + name + `-app\s+is\s+not\s+ready`),
			},
			{
				PreConfig: func() {
					uid = acctest.UID(t, deployments, ns, name+"-app")
					if got := recordStatuses(t, ns, name); fmt.Sprint(got) != fmt.Sprint(map[string]string{"v1": "failed"}) {
						t.Errorf("records after the failed install: %v, want v1 failed", got)
					}
				},
				Config: releaseConfig(t, ns, name, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("k8sconnect_helm_release.app", plancheck.ResourceActionCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("revision"), knownvalue.Int64Exact(2)),
					records(t, ns, name, map[string]string{"v1": "failed", "v2": "deployed"}),
					acctest.ClusterCheck(func() error {
						if got := acctest.UID(t, deployments, ns, name+"-app"); got != uid {
							return fmt.Errorf("the Deployment was recreated: UID %s -> %s", uid, got)
						}
						return nil
					}),
				},
			},
		},
	})
}

// What helm does to the release is seen: a rollback or an upgrade by helm is
// drift on the fields it changed, shown per object and reverted by the next
// apply, whose revision helm status then shows deployed; an uninstall by helm
// leaves nothing, so the next plan installs again.
func TestAccHelmReleaseSeesWhatHelmDid(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "seen"
	greeting := func(g string) string {
		return releaseConfig(t, ns, name, fmt.Sprintf(`set = [{ name = "greeting", value = %q }]`, g))
	}
	key := "core/ConfigMap/" + ns + "/" + name + "-settings"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{Config: greeting("hello")},
			{Config: greeting("bonjour")},
			{
				PreConfig: func() { helmCLI(t, "rollback", name, "1", "-n", ns) },
				Config:    greeting("bonjour"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("k8sconnect_helm_release.app", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("objects").AtMapKey(key).AtMapKey("data.greeting"),
						knownvalue.StringExact("bonjour")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					configMapData(t, ns, name+"-settings", "greeting", "bonjour"),
					// 1 and 2 ours, 3 helm's rollback, 4 ours again.
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("revision"), knownvalue.Int64Exact(4)),
				},
			},
			{
				// An upgrade by someone else, reusing our values but one.
				PreConfig: func() {
					helmCLI(t, "upgrade", name, chartPath(t, "lifecycle"), "-n", ns, "--reuse-values", "--set", "greeting=hola")
				},
				Config: greeting("bonjour"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("k8sconnect_helm_release.app", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("objects").AtMapKey(key).AtMapKey("data.greeting"),
						knownvalue.StringExact("bonjour")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					configMapData(t, ns, name+"-settings", "greeting", "bonjour"),
					// 5 helm's upgrade, 6 ours.
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("revision"), knownvalue.Int64Exact(6)),
					acctest.ClusterCheck(func() error {
						out := helmCLI(t, "status", name, "-n", ns)
						if !regexp.MustCompile(`STATUS: deployed`).MatchString(out) || !regexp.MustCompile(`REVISION: 6\b`).MatchString(out) {
							return fmt.Errorf("helm status should show revision 6 deployed:\n%s", out)
						}
						return nil
					}),
				},
			},
			{
				PreConfig: func() { helmCLI(t, "uninstall", name, "-n", ns) },
				Config:    greeting("bonjour"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("k8sconnect_helm_release.app", plancheck.ResourceActionCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					configMapData(t, ns, name+"-settings", "greeting", "bonjour"),
					records(t, ns, name, map[string]string{"v1": "deployed"}),
				},
			},
		},
	})
}

// Objects that are someone else's are refused at plan, naming the owner,
// with nothing applied: one made with kubectl, and one of another release.
func TestAccHelmReleaseRefusesObjectsItDoesNotOwn(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "careful"
	acctest.ApplyAs(t, "kubectl", configMaps, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s-settings, namespace: %s}\ndata: {greeting: mine}\n", name, ns))
	acctest.ApplyAs(t, "helm", configMaps, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s-extra, namespace: %s, annotations: {meta.helm.sh/release-name: other, meta.helm.sh/release-namespace: %s}, labels: {app.kubernetes.io/managed-by: Helm}}\ndata: {note: theirs}\n", name, ns, ns))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{
				Config: releaseConfig(t, ns, name, ""),
				// Both, each named with its owner.
				ExpectError: regexp.MustCompile(`(?s)(core/ConfigMap/` + ns + `/` + name + `-extra.*belongs\s+to\s+Helm\s+release\s+` + ns +
					`/other.*core/ConfigMap/` + ns + `/` + name + `-settings.*belongs\s+to\s+no\s+Helm\s+release\s+\(made\s+by\s+kubectl\)|` +
					`core/ConfigMap/` + ns + `/` + name + `-settings.*belongs\s+to\s+no\s+Helm\s+release\s+\(made\s+by\s+kubectl\).*` +
					`core/ConfigMap/` + ns + `/` + name + `-extra.*belongs\s+to\s+Helm\s+release\s+` + ns + `/other)`),
			},
		},
	})
	if err := configMapData(t, ns, name+"-settings", "greeting", "mine")(); err != nil {
		t.Error(err)
	}
	if got := recordStatuses(t, ns, name); len(got) != 0 {
		t.Errorf("a refused plan wrote release records: %v", got)
	}
}

// delete_protection refuses a destroy until it is switched off; bad input
// (a template's own error, a missing chart) is a plan-time error that names
// the template, with nothing applied.
func TestAccHelmReleaseGuards(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "guarded"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{
				Config:      releaseConfig(t, ns, name, `set = [{ name = "greeting", value = "" }]`),
				ExpectError: regexp.MustCompile(`(?s)Chart\s+not\s+rendered.*lifecycle/templates/objects\.yaml.*set\s+a\s+greeting:\s+the\s+settings\s+need\s+one`),
			},
			{
				Config:      strings.Replace(releaseConfig(t, ns, name, ""), chartPath(t, "lifecycle"), chartPath(t, "missing"), 1),
				ExpectError: regexp.MustCompile(`(?s)Chart\s+not\s+loaded`),
			},
			{
				PreConfig: func() {
					if got := recordStatuses(t, ns, name); len(got) != 0 {
						t.Errorf("a refused plan wrote release records: %v", got)
					}
				},
				Config: releaseConfig(t, ns, name, `delete_protection = true`),
			},
			{
				Config:      fmt.Sprintf("# the release left the configuration\n%s", `terraform {}`),
				ExpectError: regexp.MustCompile(`(?s)protected\s+from\s+deletion.*delete_protection\s+=\s+false`),
			},
			{Config: releaseConfig(t, ns, name, `delete_protection = false`)},
		},
	})
}

// Drift on an object of the release is explained as for any
// k8sconnect_object (ADR 0008's classifier): the plan after kubectl edits a
// field names the object, the field, the new value and who changed it; a
// second revert of the same manager's change says it keeps coming back.
func TestAccHelmReleaseExplainsDriftPerObject(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "explained"
	w := acctest.NewWorkdir(t)
	w.Write(releaseConfig(t, ns, name, ""))
	w.MustApply()
	w.Cleanup()
	subject := "core/ConfigMap/" + ns + "/" + name + "-settings"
	for round := 1; round <= 2; round++ {
		acctest.PatchAs(t, "kubectl-edit", configMaps, ns, name+"-settings", `{"data":{"greeting":"edited"}}`)
		r := w.Plan()
		if r.Err != nil {
			t.Fatalf("plan: %v\n%s", r.Err, r.Output)
		}
		var found bool
		for _, d := range r.Warnings() {
			if strings.Contains(d.Detail, subject) && strings.Contains(d.Detail, "data.greeting") &&
				strings.Contains(d.Detail, "kubectl-edit") && strings.Contains(d.Detail, "chart's values") {
				found = true
				if round == 2 && !strings.Contains(d.Summary, "Persistent ownership conflict") {
					t.Errorf("the second revert is not called persistent: %+v", d)
				}
			}
		}
		if !found {
			t.Fatalf("round %d: no warning explains the drift on %s data.greeting by kubectl-edit: %+v", round, subject, r.Warnings())
		}
		w.MustApply()
	}
}

// A chart that generates a password once and reads it back with lookup, with
// a subchart and a values.schema.json: installed, the next plan is empty
// (rendered against the cluster, lookup finds the Secret, so nothing churns)
// and the Secret keeps its UID and value; values the schema refuses fail the
// plan, with nothing applied.
func TestAccHelmReleaseLookupSubchartAndSchema(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "shop"
	shop, err := filepath.Abs(filepath.Join("..", "helmtemplate", "testdata", "charts", "shop"))
	if err != nil {
		t.Fatal(err)
	}
	config := func(set string) string {
		return strings.Replace(releaseConfig(t, ns, name, set), chartPath(t, "lifecycle"), shop, 1)
	}
	secretsGVR := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	var uid, password string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{
				Config: config(`set = [{ name = "audit.enabled", value = "true" }]`),
				ConfigStateChecks: []statecheck.StateCheck{
					acctest.ClusterCheck(func() error {
						s := acctest.MustGet(t, secretsGVR, ns, name+"-shop-auth")
						uid, password = string(s.GetUID()), fmt.Sprint(s.Object["data"])
						return nil
					}),
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app",
						tfjsonpath.New("objects").AtMapKey("core/Secret/"+ns+"/"+name+"-shop-auth").AtMapKey("data.password"),
						knownvalue.StringRegexp(regexp.MustCompile(`^\(sensitive, hmac-sha256:[0-9a-f]{16}\)$`))),
				},
			},
			{
				Config:           config(`set = [{ name = "audit.enabled", value = "true" }]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				ConfigStateChecks: []statecheck.StateCheck{acctest.ClusterCheck(func() error {
					s := acctest.MustGet(t, secretsGVR, ns, name+"-shop-auth")
					if string(s.GetUID()) != uid || fmt.Sprint(s.Object["data"]) != password {
						return fmt.Errorf("the looked-up Secret changed: UID %s -> %s, password changed %v",
							uid, s.GetUID(), fmt.Sprint(s.Object["data"]) != password)
					}
					return nil
				})},
			},
			{
				Config:      config(`set = [{ name = "audit.enabled", value = "true" }, { name = "replicas", value = "-1" }]`),
				ExpectError: regexp.MustCompile(`(?s)Chart\s+not\s+rendered.*replicas.*minimum`),
			},
			{
				Config:           config(`set = [{ name = "audit.enabled", value = "true" }]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("revision"), knownvalue.Int64Exact(1)),
				},
			},
		},
	})
}
