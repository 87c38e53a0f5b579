package yamlsplit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/fixtures"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
	"github.com/k8sconnect/k8sconnect/provider/yamlsplit"
)

func TestMain(m *testing.M) { acctest.Main(m) }

// read calls the data source's Read directly, without an engine, and returns
// its manifests.
func read(t testing.TB, attrs map[string]tftypes.Value) (*datasource.ReadResponse, tftypes.Value) {
	t.Helper()
	resp, out := acctest.ReadDataSource(t, yamlsplit.New(), attrs)
	return resp, out["manifests"]
}

func str(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }

func TestUnknownInputReadsAsUnknown(t *testing.T) {
	resp, manifests := read(t, map[string]tftypes.Value{"content": tftypes.NewValue(tftypes.String, tftypes.UnknownValue)})
	if resp.Diagnostics.HasError() {
		t.Fatal(resp.Diagnostics)
	}
	if manifests.IsKnown() {
		t.Fatalf("manifests = %v, want unknown", manifests)
	}
}

func TestReadReportsEachProblemOnItsInput(t *testing.T) {
	resp, _ := read(t, map[string]tftypes.Value{"content": str("kind: A\n---\nkind: B\n")})
	if n := resp.Diagnostics.ErrorsCount(); n != 2 {
		t.Fatalf("%d errors, want 2: %v", n, resp.Diagnostics)
	}
	for _, d := range resp.Diagnostics.Errors() {
		if !strings.Contains(d.Detail(), "content document") {
			t.Errorf("diagnostic %q does not name the document", d.Detail())
		}
	}
}

// BenchmarkSplitDataSource measures the data source's whole Read of a 5 MB,
// 2,000-document input, framework conversion included, in CPU time.
func BenchmarkSplitDataSource(b *testing.B) {
	var sb strings.Builder
	pad := strings.Repeat("x", 2400)
	for i := range 2000 {
		fmt.Fprintf(&sb, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web-%d\n  namespace: ns-%d\n  annotations: {note: %q}\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers: [{name: web, image: nginx}]\n---\n", i, i%10, pad)
	}
	content := str(sb.String())
	b.SetBytes(int64(sb.Len()))
	start := cpuTime()
	n := 0
	for b.Loop() {
		n++
		resp, manifests := read(b, map[string]tftypes.Value{"content": content})
		var m map[string]tftypes.Value
		if resp.Diagnostics.HasError() || manifests.As(&m) != nil || len(m) != 2000 {
			b.Fatalf("%d manifests, %v", len(m), resp.Diagnostics)
		}
	}
	b.ReportMetric(float64((cpuTime()-start).Milliseconds())/float64(n), "cpu-ms/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// testdata returns the absolute path of a testdata file: the engine runs in a
// working directory of its own.
func testdata(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// The engine validates and reads the data source without a cluster: keys, the
// three inputs, and the errors a user sees.
func TestAccYAMLSplitInputs(t *testing.T) {
	keys := func(name string, want ...string) statecheck.StateCheck {
		checks := map[string]knownvalue.Check{}
		for _, k := range want {
			checks[k] = knownvalue.NotNull()
		}
		return statecheck.ExpectKnownValue("data.k8sconnect_yaml_split."+name, tfjsonpath.New("manifests"), knownvalue.MapExact(checks))
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{
				Config: fmt.Sprintf(`
data "k8sconnect_yaml_split" "content" {
  content = file(%q)
}
data "k8sconnect_yaml_split" "pattern" {
  pattern = %q
}
data "k8sconnect_yaml_split" "kustomize" {
  kustomize_path = %q
}
`, testdata(t, "app/app.yaml"), filepath.Join(testdata(t, "app"), "*.yaml"), testdata(t, "kustomize/overlay")),
				ConfigStateChecks: []statecheck.StateCheck{
					keys("content", "core/ConfigMap/yamlsplit-app/settings", "apps/Deployment/yamlsplit-app/web", "core/Namespace/yamlsplit-app"),
					keys("pattern", "core/ConfigMap/yamlsplit-app/settings", "apps/Deployment/yamlsplit-app/web", "core/Namespace/yamlsplit-app",
						"rbac.authorization.k8s.io/ClusterRole/yamlsplit-reader"),
					keys("kustomize", "core/ConfigMap/yamlsplit-kustomize/prod-settings", "apps/Deployment/yamlsplit-kustomize/prod-web"),
				},
			},
			{
				Config:      `data "k8sconnect_yaml_split" "x" {}`,
				ExpectError: acctest.Words("Set one of content, pattern or kustomize_path."),
			},
			{
				Config:      fmt.Sprintf("data \"k8sconnect_yaml_split\" \"x\" {\n  content = \"a: 1\"\n  pattern = %q\n}\n", "*.yaml"),
				ExpectError: acctest.Words("Set only one of content, pattern or kustomize_path."),
			},
			{
				Config:      fmt.Sprintf("data \"k8sconnect_yaml_split\" \"x\" {\n  content = file(%q)\n}\n", testdata(t, "broken/duplicate.yaml")),
				ExpectError: acctest.Words("core/ConfigMap/default/twice is defined twice: in content document 1 (line 2) and in content document 3 (line 11)"),
			},
			{
				Config:      fmt.Sprintf("data \"k8sconnect_yaml_split\" \"x\" {\n  pattern = %q\n}\n", testdata(t, "broken/invalid.yaml")),
				ExpectError: acctest.Words("invalid.yaml document 2 (line 6) is not valid YAML: line 10: mapping values are not allowed"),
			},
		},
	})
}

// A content computed during the apply plans as unknown instead of failing, and
// is split once known.
func TestAccYAMLSplitUnknownContent(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "terraform_data" "name" {
  input = "late"
}
data "k8sconnect_yaml_split" "x" {
  content = templatefile(%q, { name = terraform_data.name.output })
}
output "keys" {
  value = keys(data.k8sconnect_yaml_split.x.manifests)
}
`, testdata(t, "template/configmap.yaml.tftpl")),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectUnknownOutputValue("keys")},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("keys", knownvalue.ListExact([]knownvalue.Check{
					knownvalue.StringExact("core/ConfigMap/default/late"),
				})),
			},
		}},
	})
}

var (
	configMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// A kustomize overlay (a base, a patch and a namePrefix) applied with for_each
// over the split manifests.
func TestAccYAMLSplitKustomizeApply(t *testing.T) {
	conn := acctest.Connection(t)
	const ns = "yamlsplit-kustomize"
	namespace := fmt.Sprintf(`
resource "k8sconnect_object" "namespace" {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: Namespace
    metadata:
      name: %s
  YAML
  %s
}
`, ns, conn)
	app := fmt.Sprintf(`
data "k8sconnect_yaml_split" "app" {
  kustomize_path = %q
}

resource "k8sconnect_object" "app" {
  for_each   = data.k8sconnect_yaml_split.app.manifests
  yaml_body  = each.value
  %s
  depends_on = [k8sconnect_object.namespace]
}
`, testdata(t, "kustomize/overlay"), conn)

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{
				Config: namespace + app,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(`k8sconnect_object.app["apps/Deployment/yamlsplit-kustomize/prod-web"]`,
						tfjsonpath.New("id"), knownvalue.NotNull()),
					acctest.ClusterCheck(func() error {
						d, err := acctest.Get(t, deployments, ns, "prod-web")
						if err != nil || d == nil {
							return fmt.Errorf("Deployment %s/prod-web not in the cluster (err=%v)", ns, err)
						}
						if r, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas"); r != 3 {
							return fmt.Errorf("Deployment %s/prod-web has %d replicas; the overlay's patch sets 3", ns, r)
						}
						if cm, err := acctest.Get(t, configMaps, ns, "prod-settings"); err != nil || cm == nil {
							return fmt.Errorf("ConfigMap %s/prod-settings not in the cluster (err=%v)", ns, err)
						}
						return nil
					}),
				},
			},
			{
				// Removing the for_each resources destroys them, and leaves a
				// state the test framework's final read can shim.
				Config: namespace,
				ConfigStateChecks: []statecheck.StateCheck{
					acctest.ClusterCheck(func() error {
						if d, err := acctest.Get(t, deployments, ns, "prod-web"); err != nil || d != nil {
							return fmt.Errorf("Deployment %s/prod-web still exists after its resource was removed (err=%v)", ns, err)
						}
						return nil
					}),
				},
			},
		},
	})
}

// kustomize_options reaches the data source's build as the set's: refused
// without enable_helm, naming it; with both flags, the chart's ConfigMap and
// the file from outside the directory are manifests.
func TestAccYAMLSplit_kustomizeOptions(t *testing.T) {
	helm, err := toolchain.Built(context.Background(), toolchain.Helm)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := fixtures.KustomizationNeedingFlags(t.TempDir(), "split")
	if err != nil {
		t.Fatal(err)
	}
	config := func(options string) string {
		return fmt.Sprintf("data \"k8sconnect_yaml_split\" \"k\" {\n  kustomize_path = %q\n  %s\n}\n", dir, options)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{
				Config:      config(`kustomize_options = { load_restrictor = "LoadRestrictionsNone" }`),
				ExpectError: acctest.Words("kustomize_options.enable_helm = true"),
			},
			{
				Config: config(fmt.Sprintf(`kustomize_options = { load_restrictor = "LoadRestrictionsNone", enable_helm = true, helm_command = %q }`, helm)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.k8sconnect_yaml_split.k", tfjsonpath.New("manifests"), knownvalue.MapExact(map[string]knownvalue.Check{
						"core/ConfigMap/web-greeting":          knownvalue.StringRegexp(regexp.MustCompile(`"greeting":"hi"`)),
						"core/ConfigMap/split/shared-settings": knownvalue.NotNull(),
					})),
				},
			},
		},
	})
}
