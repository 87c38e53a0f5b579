package yamlscoped_test

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/provider/acctest"
	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/yamldocs"
	"github.com/k8sconnect/k8sconnect/provider/yamlscoped"
)

func TestMain(m *testing.M) { acctest.Main(m) }

// read calls the data source's Read directly, without an engine.
func read(t *testing.T, attrs map[string]tftypes.Value) (*datasource.ReadResponse, map[string]tftypes.Value) {
	t.Helper()
	ctx := context.Background()
	ds := yamlscoped.New()
	ds.(datasource.DataSourceWithConfigure).Configure(ctx, datasource.ConfigureRequest{ProviderData: connection.NewCache()}, &datasource.ConfigureResponse{})
	var sr datasource.SchemaResponse
	ds.Schema(ctx, datasource.SchemaRequest{}, &sr)
	typ := sr.Schema.Type().TerraformType(ctx).(tftypes.Object)
	vals := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		vals[name] = tftypes.NewValue(at, nil)
	}
	for name, v := range attrs {
		vals[name] = v
	}
	raw := tftypes.NewValue(typ, vals)
	resp := &datasource.ReadResponse{State: tfsdk.State{Schema: sr.Schema, Raw: raw.Copy()}}
	ds.Read(ctx, datasource.ReadRequest{Config: tfsdk.Config{Schema: sr.Schema, Raw: raw}}, resp)
	var out map[string]tftypes.Value
	if err := resp.State.Raw.As(&out); err != nil {
		t.Fatal(err)
	}
	return resp, out
}

const shelf = "apiVersion: yamlscoped.k8sconnect.test/v1\nkind: Shelf\nmetadata:\n  name: a\n"

// A connection to a cluster created in the same apply is unknown at plan: the
// outputs are unknown too, and nothing is reported.
func TestUnknownConnectionReadsAsUnknown(t *testing.T) {
	ctx := context.Background()
	connType := connection.DataSourceAttribute("").GetType().TerraformType(ctx)
	resp, out := read(t, map[string]tftypes.Value{
		"content":            tftypes.NewValue(tftypes.String, shelf),
		"cluster_connection": tftypes.NewValue(connType, tftypes.UnknownValue),
	})
	if resp.Diagnostics.HasError() {
		t.Fatal(resp.Diagnostics)
	}
	for _, name := range []string{"crds", "cluster_scoped", "namespaced"} {
		if out[name].IsKnown() {
			t.Errorf("%s = %v, want unknown", name, out[name])
		}
	}
}

func TestUnknownKindWithoutConnectionNamesTheRemedy(t *testing.T) {
	resp, _ := read(t, map[string]tftypes.Value{"content": tftypes.NewValue(tftypes.String, "# first\n---\n"+shelf)})
	if !resp.Diagnostics.HasError() {
		t.Fatal("unknown kind accepted")
	}
	msg := resp.Diagnostics.Errors()[0].Detail()
	for _, want := range []string{"Shelf.yamlscoped.k8sconnect.test", "content document 2 (line 3)", "cluster_connection", "CustomResourceDefinition"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
}

func words(msg string) *regexp.Regexp {
	parts := strings.Fields(msg)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(strings.Join(parts, `\s+`))
}

var (
	configMaps      = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	serviceAccounts = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	namespaces      = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	crds            = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	shelves         = schema.GroupVersionResource{Group: "yamlscoped.k8sconnect.test", Version: "v1", Resource: "shelves"}
)

// scopedConfig applies one file through yaml_scoped: CRDs, then cluster-scoped
// objects, then namespaced ones, each group waiting for the one before.
func scopedConfig(t *testing.T, file, namespace string) string {
	conn := acctest.Connection(t)
	p, err := filepath.Abs(filepath.Join("testdata", "scoped", file))
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`
data "k8sconnect_yaml_scoped" "app" {
  content = templatefile(%[1]q, { namespace = %[2]q })
}

resource "k8sconnect_object" "crds" {
  for_each  = data.k8sconnect_yaml_scoped.app.crds
  yaml_body = each.value
  %[3]s
}

resource "k8sconnect_object" "cluster_scoped" {
  for_each   = data.k8sconnect_yaml_scoped.app.cluster_scoped
  yaml_body  = each.value
  %[3]s
  depends_on = [k8sconnect_object.crds]
}

resource "k8sconnect_object" "namespaced" {
  for_each   = data.k8sconnect_yaml_scoped.app.namespaced
  yaml_body  = each.value
  %[3]s
  depends_on = [k8sconnect_object.cluster_scoped]
}
`, p, namespace, conn)
}

func exists(t *testing.T, gvr schema.GroupVersionResource, ns, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		obj, err := acctest.Get(t, gvr, ns, name)
		if err != nil || obj == nil {
			return fmt.Errorf("%s %s/%s not in the cluster (err=%v)", gvr.Resource, ns, name, err)
		}
		return nil
	}
}

// The scenario of the issue: one file with a CRD, a cluster-scoped custom
// resource, a Namespace and namespaced objects, written in an order that cannot
// be applied as is, applies in one run; reordering its documents plans nothing.
func TestAccYAMLScopedAppliesInOrder(t *testing.T) {
	ns := acctest.Name("scoped")
	keys := func(attr string, want ...string) statecheck.StateCheck {
		checks := map[string]knownvalue.Check{}
		for _, k := range want {
			checks[k] = knownvalue.NotNull()
		}
		return statecheck.ExpectKnownValue("data.k8sconnect_yaml_scoped.app", tfjsonpath.New(attr), knownvalue.MapExact(checks))
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		CheckDestroy: func(*terraform.State) error {
			for _, o := range []struct {
				gvr      schema.GroupVersionResource
				ns, name string
			}{{shelves, "", ns}, {configMaps, ns, "settings"}} {
				// A CR is gone with its CRD and a ConfigMap with its namespace,
				// so only the API error tells; NotFound and NoMatch both mean gone.
				if obj, err := acctest.Get(t, o.gvr, o.ns, o.name); err == nil && obj != nil {
					return fmt.Errorf("%s %s/%s still exists after destroy", o.gvr.Resource, o.ns, o.name)
				}
			}
			if obj, err := acctest.Get(t, crds, "", "shelves.yamlscoped.k8sconnect.test"); err != nil || obj != nil {
				return fmt.Errorf("the CRD still exists after destroy (err=%v)", err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: scopedConfig(t, "app.yaml.tftpl", ns),
				ConfigStateChecks: []statecheck.StateCheck{
					keys("crds", "apiextensions.k8s.io/CustomResourceDefinition/shelves.yamlscoped.k8sconnect.test"),
					keys("cluster_scoped", "core/Namespace/"+ns, "yamlscoped.k8sconnect.test/Shelf/"+ns),
					keys("namespaced", "core/ConfigMap/"+ns+"/settings", "core/ServiceAccount/"+ns+"/reader"),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					exists(t, crds, "", "shelves.yamlscoped.k8sconnect.test"),
					exists(t, shelves, "", ns),
					exists(t, namespaces, "", ns),
					exists(t, configMaps, ns, "settings"),
					exists(t, serviceAccounts, ns, "reader"),
				),
			},
			{
				Config: scopedConfig(t, "reordered.yaml.tftpl", ns),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
		},
	})
}

// Scope of a custom kind that is not in the input: an error without a
// connection, the cluster's answer with one.
func TestAccYAMLScopedAsksTheCluster(t *testing.T) {
	conn := acctest.Connection(t)
	crd, err := filepath.Abs(filepath.Join("testdata", "scoped", "app.yaml.tftpl"))
	if err != nil {
		t.Fatal(err)
	}
	// The CRD is installed by a first step; the data sources in later steps see
	// only a custom resource of its kind.
	install := fmt.Sprintf(`
data "k8sconnect_yaml_scoped" "crd" {
  content = templatefile(%q, { namespace = "unused" })
}

resource "k8sconnect_object" "crd" {
  for_each  = data.k8sconnect_yaml_scoped.crd.crds
  yaml_body = each.value
  %s
}
`, crd, conn)
	const cr = `<<-YAML
    apiVersion: yamlscoped.k8sconnect.test/v1
    kind: Shelf
    metadata:
      name: probe
  YAML`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{Config: install},
			{
				Config:      install + fmt.Sprintf("data \"k8sconnect_yaml_scoped\" \"probe\" {\n  content = %s\n}\n", cr),
				ExpectError: words("Set cluster_connection so the cluster's discovery tells the scope"),
			},
			{
				Config: install + fmt.Sprintf("data \"k8sconnect_yaml_scoped\" \"probe\" {\n  content = %s\n  %s\n}\n", cr, conn),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.k8sconnect_yaml_scoped.probe", tfjsonpath.New("cluster_scoped"),
						knownvalue.MapExact(map[string]knownvalue.Check{"yamlscoped.k8sconnect.test/Shelf/probe": knownvalue.NotNull()})),
					statecheck.ExpectKnownValue("data.k8sconnect_yaml_scoped.probe", tfjsonpath.New("namespaced"), knownvalue.MapSizeExact(0)),
				},
			},
		},
	})
}

// The built-in table is what lets yaml_scoped work without a cluster; every
// kind in it that the cluster serves must have the scope the cluster says.
func TestAccBuiltinScopesMatchTheCluster(t *testing.T) {
	lists, err := acctest.Clientset(t).Discovery().ServerPreferredResources()
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	table := yamldocs.BuiltinScopes()
	served := 0
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") {
				continue // subresources
			}
			gk := schema.GroupKind{Group: gv.Group, Kind: r.Kind}
			namespaced, ok := table[gk]
			if !ok {
				continue
			}
			served++
			if namespaced != r.Namespaced {
				t.Errorf("%s: table says namespaced=%v, the cluster says %v", gk, namespaced, r.Namespaced)
			}
		}
	}
	if served < 40 {
		t.Errorf("only %d kinds of the table are served by the cluster; is discovery working?", served)
	}
}
