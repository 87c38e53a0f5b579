package helmrelease_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

func TestMain(m *testing.M) { acctest.Main(m) }

var (
	configMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets     = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	jobs        = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	crds        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// chartPath is the test chart name. The lifecycle chart is a copy of the
// test's own (lifecycleChart).
func chartPath(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "charts", name))
	if err != nil {
		t.Fatal(err)
	}
	if name == "lifecycle" {
		return lifecycleChart(t, p)
	}
	return p
}

// lifecycleCopies are the tests' copies of the lifecycle chart, by test.
var lifecycleCopies sync.Map

// lifecycleChart is the test's copy of the lifecycle chart at dir, made at
// its first call, whose crds/ CRD has the group lifecycleGroup: a CRD is
// cluster-wide, and releases installing one at the same moment race for it
// (the second is refused), which is a test of its own, not of every test.
func lifecycleChart(t testing.TB, dir string) string {
	t.Helper()
	if p, ok := lifecycleCopies.Load(t); ok {
		return p.(string)
	}
	out := filepath.Join(t.TempDir(), "lifecycle")
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(out, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(out, rel), bytes.ReplaceAll(b, []byte(lifecycleGroupInRepo), []byte(lifecycleGroup(t))), 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	lifecycleCopies.Store(t, out)
	t.Cleanup(func() {
		lifecycleCopies.Delete(t)
		_ = acctest.Dynamic(t).Resource(crds).Delete(context.Background(), "gadgets."+lifecycleGroup(t), metav1.DeleteOptions{})
	})
	return out
}

// lifecycleGroupInRepo is the group of the lifecycle chart's CRD in testdata.
const lifecycleGroupInRepo = "helmrelease.k8sconnect.test"

// lifecycleGroup is the group of the test's lifecycle CRD: one per test name.
func lifecycleGroup(t testing.TB) string {
	return fmt.Sprintf("l%08x.%s", crc32.ChecksumIEEE([]byte(t.Name())), lifecycleGroupInRepo)
}

// gadgetsOf is the resource of the test's lifecycle custom resources.
func gadgetsOf(t testing.TB) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: lifecycleGroup(t), Version: "v1", Resource: "gadgets"}
}

func releaseConfig(t *testing.T, ns, name, extra string) string {
	return releaseVia(t, acctest.Connection(t), ns, name, extra)
}

// releaseVia is releaseConfig with the resource's cluster_connection conn.
func releaseVia(t *testing.T, conn, ns, name, extra string) string {
	return fmt.Sprintf(`
resource "k8sconnect_helm_release" "app" {
  name      = %[3]q
  namespace = %[2]q
  chart     = %[4]q
  timeout   = "60s"
  %[5]s
  %[1]s
}
`, conn, ns, name, chartPath(t, "lifecycle"), extra)
}

// releaseThroughProvider is the lifecycle chart's release with greeting=hi and
// keep=false, as a release made elsewhere was installed, connected through the
// provider block only (the resource has no cluster_connection), with blocks
// (an import or a moved block) between the two.
func releaseThroughProvider(t *testing.T, ns, name, blocks string) string {
	return fmt.Sprintf(`
provider "k8sconnect" {
  %s
}
%s
resource "k8sconnect_helm_release" "app" {
  name      = %q
  namespace = %q
  chart     = %q
  timeout   = "60s"
  set       = [{ name = "greeting", value = "hi" }, { name = "keep", value = "false" }]
}
`, acctest.Connection(t), blocks, name, ns, chartPath(t, "lifecycle"))
}

// configMapData is a cluster check of one ConfigMap key.
func configMapData(t *testing.T, ns, name, key, want string) acctest.ClusterCheck {
	return func() error {
		cm, err := acctest.Get(t, configMaps, ns, name)
		if err != nil || cm == nil {
			return fmt.Errorf("configmap %s: %v (present %v)", name, err, cm != nil)
		}
		if got, _, _ := unstructured.NestedString(cm.Object, "data", key); got != want {
			return fmt.Errorf("configmap %s data.%s = %q, want %q", name, key, got, want)
		}
		return nil
	}
}

func present(t *testing.T, gvr schema.GroupVersionResource, ns, name string, want bool) acctest.ClusterCheck {
	return func() error {
		obj, err := acctest.Get(t, gvr, ns, name)
		if err != nil {
			return err
		}
		if (obj != nil) != want {
			return fmt.Errorf("%s %s/%s: present %v, want %v", gvr.Resource, ns, name, obj != nil, want)
		}
		return nil
	}
}

// recordStatuses are the statuses of the release's records by revision, as
// Helm's Secret driver labels them.
func recordStatuses(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i := 1; i <= 10; i++ {
		s, err := acctest.Get(t, secrets, ns, fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, i))
		if err != nil {
			t.Fatal(err)
		}
		if s != nil {
			if s.GetLabels()["owner"] != "helm" || s.Object["type"].(string) != "helm.sh/release.v1" {
				t.Errorf("record v%d is not in Helm's format: labels %v, type %v", i, s.GetLabels(), s.Object["type"])
			}
			out[fmt.Sprintf("v%d", i)] = s.GetLabels()["status"]
		}
	}
	return out
}

func records(t *testing.T, ns, name string, want map[string]string) acctest.ClusterCheck {
	return func() error {
		got := recordStatuses(t, ns, name)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("release records %v, want %v", got, want)
		}
		return nil
	}
}

// chartVersion is a state check of the release's resolved chart_version.
func chartVersion(v string) statecheck.StateCheck {
	return statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("chart_version"), knownvalue.StringExact(v))
}

// appReleaseRemoved is the CheckDestroy of a release of chartrepo's test
// chart: its ConfigMap is gone, and so is every record.
func appReleaseRemoved(t *testing.T, ns, name string) func(*terraform.State) error {
	return func(*terraform.State) error {
		if err := present(t, configMaps, ns, name+"-app", false)(); err != nil {
			return err
		}
		return records(t, ns, name, map[string]string{})()
	}
}

// The lifecycle end to end: install runs the CRD first, the pre-install
// hooks by weight (the Job deleted once it succeeded), every object, the
// post-install hook, and writes revision 1; a second plan is empty; a field
// changed by someone else is drift that the next apply reverts; an upgrade
// deletes the object that left the chart but keeps the one marked keep,
// supersedes revision 1; a failing hook fails the run with the pod's own
// message and a failed record, and the next apply goes through; destroy runs
// the delete hooks and removes every record.
func TestAccHelmReleaseLifecycle(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "life"
	pw := acctest.NewSecretValue("pw")
	sensitiveSet := fmt.Sprintf(`set_sensitive = [{ name = "password", value = %q }]`, pw.Plain)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		CheckDestroy: func(*terraform.State) error {
			for _, c := range []acctest.ClusterCheck{
				present(t, configMaps, ns, name+"-settings", false),
				present(t, deployments, ns, name+"-app", false),
				present(t, gadgetsOf(t), ns, name+"-gadget", false),
				present(t, configMaps, ns, name+"-kept", true),           // helm.sh/resource-policy: keep
				present(t, crds, "", "gadgets."+lifecycleGroup(t), true), // crds/ outlives the release
				configMapData(t, ns, name+"-uninstalled", "note", "written by the post-delete hook"),
				records(t, ns, name, map[string]string{}),
			} {
				if err := c(); err != nil {
					return err
				}
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: releaseConfig(t, ns, name, sensitiveSet),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("revision"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("status"), knownvalue.StringExact("deployed")),
					chartVersion("1.2.0"),
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app",
						tfjsonpath.New("objects").AtMapKey("core/ConfigMap/"+ns+"/"+name+"-settings").AtMapKey("data.greeting"),
						knownvalue.StringExact("hello")),
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app",
						tfjsonpath.New("objects").AtMapKey(lifecycleGroup(t)+"/Gadget/"+ns+"/"+name+"-gadget").AtMapKey("spec.size"),
						knownvalue.StringExact("large")),
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app",
						tfjsonpath.New("objects").AtMapKey("core/Secret/"+ns+"/"+name+"-auth").AtMapKey("stringData.password"),
						knownvalue.StringRegexp(regexp.MustCompile(`^\(sensitive, hmac-sha256:[0-9a-f]{16}\)$`))),
					configMapData(t, ns, name+"-settings", "greeting", "hello"),
					configMapData(t, ns, name+"-pre-marker", "revision", "1"),
					configMapData(t, ns, name+"-pre-marker", "upgrade", "false"),
					configMapData(t, ns, name+"-post-marker", "revision", "1"),
					present(t, jobs, ns, name+"-migrate", false), // hook-succeeded
					present(t, configMaps, ns, name+"-extra", true),
					records(t, ns, name, map[string]string{"v1": "deployed"}),
					noSecretInState(t, pw),
				},
			},
			{
				Config: releaseConfig(t, ns, name, sensitiveSet),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				// kubectl edit by someone else: drift on a field we own.
				PreConfig: func() {
					acctest.PatchAs(t, "kubectl-edit", configMaps, ns, name+"-settings", `{"data":{"greeting":"edited"}}`)
				},
				Config: releaseConfig(t, ns, name, sensitiveSet),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("k8sconnect_helm_release.app", plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue("k8sconnect_helm_release.app",
							tfjsonpath.New("objects").AtMapKey("core/ConfigMap/"+ns+"/"+name+"-settings").AtMapKey("data.greeting"),
							knownvalue.StringExact("hello")),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					configMapData(t, ns, name+"-settings", "greeting", "hello"),
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("revision"), knownvalue.Int64Exact(2)),
					records(t, ns, name, map[string]string{"v1": "superseded", "v2": "deployed"}),
				},
			},
			{
				Config: releaseConfig(t, ns, name, sensitiveSet+`
  set = [{ name = "greeting", value = "bonjour" }, { name = "extra", value = "false" }, { name = "keep", value = "false" }]`),
				ConfigStateChecks: []statecheck.StateCheck{
					configMapData(t, ns, name+"-settings", "greeting", "bonjour"),
					configMapData(t, ns, name+"-pre-marker", "upgrade", "true"),
					configMapData(t, ns, name+"-post-marker", "revision", "3"),
					present(t, configMaps, ns, name+"-extra", false),
					present(t, configMaps, ns, name+"-kept", true),
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("revision"), knownvalue.Int64Exact(3)),
					records(t, ns, name, map[string]string{"v1": "superseded", "v2": "superseded", "v3": "deployed"}),
					helmReads(t, ns, name),
				},
			},
			{
				Config: releaseConfig(t, ns, name, sensitiveSet+`
  set = [{ name = "greeting", value = "bonjour" }, { name = "extra", value = "false" }, { name = "keep", value = "false" }, { name = "failHook", value = "true" }]`),
				ExpectError: regexp.MustCompile(`(?s)pre-upgrade\s+hook\s+batch/Job/` + ns + `/` + name +
					`-migrate\s+failed.*BackoffLimitExceeded.*failed\s+on\s+purpose.*exit\s+code\s+1`),
			},
			{
				Config: releaseConfig(t, ns, name, sensitiveSet+`
  set = [{ name = "greeting", value = "bonjour" }, { name = "extra", value = "false" }, { name = "keep", value = "false" }, { name = "failHook", value = "true" }]`),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true, // the failed upgrade is retried
			},
			{
				Config: releaseConfig(t, ns, name, sensitiveSet+`
  set = [{ name = "greeting", value = "bonjour" }, { name = "extra", value = "false" }, { name = "keep", value = "false" }]`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("revision"), knownvalue.Int64Exact(5)),
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("status"), knownvalue.StringExact("deployed")),
					records(t, ns, name, map[string]string{"v1": "superseded", "v2": "superseded", "v3": "superseded", "v4": "failed", "v5": "deployed"}),
				},
			},
		},
	})
}

// noSecretInState checks that the set_sensitive value is nowhere in objects,
// as written or base64-encoded (set_sensitive itself holds it, as Terraform
// keeps every sensitive argument), and that the search can see the hash that
// stands in for it.
func noSecretInState(t *testing.T, v acctest.SecretValue) statecheck.StateCheck {
	return objectsCheck(func(text string) error {
		for _, form := range v.Forms() {
			if strings.Contains(text, form) {
				return fmt.Errorf("objects holds the set_sensitive value (as %q)", form)
			}
		}
		if !strings.Contains(text, "(sensitive, hmac-sha256:") {
			return fmt.Errorf("objects holds no hash where the value was: the search is blind:\n%s", text)
		}
		return nil
	})
}

type objectsCheck func(text string) error

func (c objectsCheck) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	if req.State == nil || req.State.Values == nil || req.State.Values.RootModule == nil {
		resp.Error = fmt.Errorf("no state")
		return
	}
	for _, r := range req.State.Values.RootModule.Resources {
		if r.Address == "k8sconnect_helm_release.app" {
			b, err := json.Marshal(r.AttributeValues["objects"])
			if err != nil {
				resp.Error = err
				return
			}
			resp.Error = c(string(b))
			return
		}
	}
	resp.Error = fmt.Errorf("k8sconnect_helm_release.app is not in state")
}

// helmReads checks the release as the helm CLI shows it after the upgrade to
// revision 3: listed as deployed, its manifest holding the chart's objects
// but not the CRD of crds/ (which helm uninstall must keep), its values the
// user-supplied ones.
func helmReads(t *testing.T, ns, name string) acctest.ClusterCheck {
	return func() error {
		if out := helmCLI(t, "list", "-n", ns); !regexp.MustCompile(name + `\s+` + ns + `\s+3\s+.*deployed\s+lifecycle-1\.2\.0\s+3\.1`).MatchString(out) {
			return fmt.Errorf("helm list:\n%s", out)
		}
		m := helmCLI(t, "get", "manifest", name, "-n", ns)
		for _, want := range []string{"name: " + name + "-settings", "greeting: bonjour", "kind: Gadget"} {
			if !strings.Contains(m, want) {
				return fmt.Errorf("helm get manifest lacks %q:\n%s", want, m)
			}
		}
		if strings.Contains(m, "CustomResourceDefinition") || strings.Contains(m, name+"-extra") {
			return fmt.Errorf("helm get manifest holds the crds/ CRD or the removed object:\n%s", m)
		}
		if v := helmCLI(t, "get", "values", name, "-n", ns); !strings.Contains(v, "greeting: bonjour") {
			return fmt.Errorf("helm get values:\n%s", v)
		}
		return nil
	}
}
