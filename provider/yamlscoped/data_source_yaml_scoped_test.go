package yamlscoped_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/yamldocs"
	"github.com/k8sconnect/k8sconnect/provider/yamlscoped"
)

func TestMain(m *testing.M) { acctest.Main(m) }

// read calls the data source's Read directly, without an engine.
func read(t *testing.T, attrs map[string]tftypes.Value) (*datasource.ReadResponse, map[string]tftypes.Value) {
	t.Helper()
	ds := yamlscoped.New()
	ds.(datasource.DataSourceWithConfigure).Configure(context.Background(),
		datasource.ConfigureRequest{ProviderData: connection.NewCache()}, &datasource.ConfigureResponse{})
	return acctest.ReadDataSource(t, ds, attrs)
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

var (
	configMaps      = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	serviceAccounts = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	namespaces      = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	crds            = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	shelves         = schema.GroupVersionResource{Group: "yamlscoped.k8sconnect.test", Version: "v1", Resource: "shelves"}
)

// scopedConfig applies one file through yaml_scoped: CRDs, then cluster-scoped
// objects, then namespaced ones, each group waiting for the one before. Without
// objects it is the data source alone.
func scopedConfig(t *testing.T, file, namespace string, objects bool) string {
	conn := acctest.Connection(t)
	p, err := filepath.Abs(filepath.Join("testdata", "scoped", file))
	if err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`
data "k8sconnect_yaml_scoped" "app" {
  content = templatefile(%q, { namespace = %q })
}
`, p, namespace)
	if !objects {
		return config
	}
	return config + fmt.Sprintf(`
resource "k8sconnect_object" "crds" {
  for_each  = data.k8sconnect_yaml_scoped.app.crds
  yaml_body = each.value
  %[1]s
}

resource "k8sconnect_object" "cluster_scoped" {
  for_each   = data.k8sconnect_yaml_scoped.app.cluster_scoped
  yaml_body  = each.value
  %[1]s
  depends_on = [k8sconnect_object.crds]
}

resource "k8sconnect_object" "namespaced" {
  for_each   = data.k8sconnect_yaml_scoped.app.namespaced
  yaml_body  = each.value
  %[1]s
  depends_on = [k8sconnect_object.cluster_scoped]
}
`, conn)
}

type object struct {
	gvr      schema.GroupVersionResource
	ns, name string
}

// inCluster checks that each object exists (want true) or is gone (want false).
// NotFound means gone, as for a custom resource whose CRD was deleted.
func inCluster(t *testing.T, want bool, objs ...object) acctest.ClusterCheck {
	return func() error {
		for _, o := range objs {
			obj, err := acctest.Get(t, o.gvr, o.ns, o.name)
			if err != nil {
				return fmt.Errorf("reading %s %s/%s: %v", o.gvr.Resource, o.ns, o.name, err)
			}
			if want && obj == nil {
				return fmt.Errorf("%s %s/%s is not in the cluster", o.gvr.Resource, o.ns, o.name)
			}
			// A namespace being deleted still exists for a while.
			if !want && obj != nil && obj.GetDeletionTimestamp() == nil {
				return fmt.Errorf("%s %s/%s is still in the cluster", o.gvr.Resource, o.ns, o.name)
			}
		}
		return nil
	}
}

// What yaml_scoped is for: one file with a CRD, a cluster-scoped custom
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
	objects := []object{
		{crds, "", "shelves.yamlscoped.k8sconnect.test"},
		{shelves, "", ns},
		{namespaces, "", ns},
		{configMaps, ns, "settings"},
		{serviceAccounts, ns, "reader"},
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{
				Config: scopedConfig(t, "app.yaml.tftpl", ns, true),
				ConfigStateChecks: []statecheck.StateCheck{
					keys("crds", "apiextensions.k8s.io/CustomResourceDefinition/shelves.yamlscoped.k8sconnect.test"),
					keys("cluster_scoped", "core/Namespace/"+ns, "yamlscoped.k8sconnect.test/Shelf/"+ns),
					keys("namespaced", "core/ConfigMap/"+ns+"/settings", "core/ServiceAccount/"+ns+"/reader"),
					inCluster(t, true, objects...),
				},
			},
			{
				Config: scopedConfig(t, "reordered.yaml.tftpl", ns, true),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				// Removing the for_each resources destroys them in reverse order
				// (objects, then the CR, then its CRD), and leaves a state the
				// test framework's final read can shim.
				Config:            scopedConfig(t, "reordered.yaml.tftpl", ns, false),
				ConfigStateChecks: []statecheck.StateCheck{inCluster(t, false, objects...)},
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
  yaml_body = data.k8sconnect_yaml_scoped.crd.crds["apiextensions.k8s.io/CustomResourceDefinition/shelves.yamlscoped.k8sconnect.test"]
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
				ExpectError: acctest.Words("Set cluster_connection so the cluster's discovery tells the scope"),
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
