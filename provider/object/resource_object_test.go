package object_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

func TestMain(m *testing.M) { acctest.Main(m) }

var (
	configMaps   = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	clusterRoles = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
)

func configMapConfig(conn, namespace, name, value string) string {
	return fmt.Sprintf(`
resource "k8sconnect_object" "cm" {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: %s
      namespace: %s
    data:
      greeting: %s
  YAML
  %s
}
`, name, namespace, value, conn)
}

// uidRecorder remembers an object's UID in one step so later steps can prove the
// object was updated in place, not replaced.
type uidRecorder struct{ uid string }

func (u *uidRecorder) record(t *testing.T, gvr schema.GroupVersionResource, ns, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		obj, err := acctest.Get(t, gvr, ns, name)
		if err != nil || obj == nil {
			return fmt.Errorf("%s %s/%s not in the cluster (err=%v)", gvr.Resource, ns, name, err)
		}
		u.uid = string(obj.GetUID())
		return nil
	}
}

func (u *uidRecorder) unchanged(t *testing.T, gvr schema.GroupVersionResource, ns, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		obj, err := acctest.Get(t, gvr, ns, name)
		if err != nil || obj == nil {
			return fmt.Errorf("%s %s/%s not in the cluster (err=%v)", gvr.Resource, ns, name, err)
		}
		if got := string(obj.GetUID()); got != u.uid {
			return fmt.Errorf("%s %s/%s was recreated: uid %s, want %s", gvr.Resource, ns, name, got, u.uid)
		}
		return nil
	}
}

func configMapHas(t *testing.T, ns, name, key, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		obj, err := acctest.Get(t, configMaps, ns, name)
		if err != nil || obj == nil {
			return fmt.Errorf("ConfigMap %s/%s not in the cluster (err=%v)", ns, name, err)
		}
		data, _ := obj.Object["data"].(map[string]any)
		if got := data[key]; got != want {
			return fmt.Errorf("ConfigMap %s/%s data.%s = %v, want %q", ns, name, key, got, want)
		}
		return nil
	}
}

func gone(t *testing.T, gvr schema.GroupVersionResource, ns, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		obj, err := acctest.Get(t, gvr, ns, name)
		if err != nil {
			return err
		}
		if obj != nil {
			return fmt.Errorf("%s %s/%s still exists after destroy", gvr.Resource, ns, name)
		}
		return nil
	}
}

func TestAccObject_configMapLifecycle(t *testing.T) {
	ns := acctest.Namespace(t)
	name := acctest.Name("cm")
	conn := acctest.Connection(t)
	var uid uidRecorder

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		CheckDestroy:             gone(t, configMaps, ns, name),
		Steps: []resource.TestStep{
			{
				Config: configMapConfig(conn, ns, name, "hello"),
				Check: resource.ComposeAggregateTestCheckFunc(
					configMapHas(t, ns, name, "greeting", "hello"),
					uid.record(t, configMaps, ns, name),
					resource.TestMatchResourceAttr("k8sconnect_object.cm", "id", regexp.MustCompile(`^[0-9a-f]{16}$`)),
					resource.TestCheckResourceAttr("k8sconnect_object.cm", "resource_ref.kind", "ConfigMap"),
					resource.TestCheckResourceAttr("k8sconnect_object.cm", "resource_ref.api_version", "v1"),
					resource.TestCheckResourceAttr("k8sconnect_object.cm", "resource_ref.namespace", ns),
					resource.TestCheckResourceAttr("k8sconnect_object.cm", "resource_ref.name", name),
				),
			},
			{
				Config: configMapConfig(conn, ns, name, "world"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("k8sconnect_object.cm", plancheck.ResourceActionUpdate),
					},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					configMapHas(t, ns, name, "greeting", "world"),
					uid.unchanged(t, configMaps, ns, name),
				),
			},
		},
	})
}

func TestAccObject_renameReplaces(t *testing.T) {
	ns := acctest.Namespace(t)
	first, second := acctest.Name("cm"), acctest.Name("cm")
	conn := acctest.Connection(t)

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		CheckDestroy:             gone(t, configMaps, ns, second),
		Steps: []resource.TestStep{
			{Config: configMapConfig(conn, ns, first, "v")},
			{
				Config: configMapConfig(conn, ns, second, "v"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("k8sconnect_object.cm", plancheck.ResourceActionDestroyBeforeCreate),
					},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					gone(t, configMaps, ns, first),
					configMapHas(t, ns, second, "greeting", "v"),
				),
			},
		},
	})
}

func clusterRoleConfig(conn, name, verb string) string {
	return fmt.Sprintf(`
resource "k8sconnect_object" "role" {
  yaml_body = <<-YAML
    apiVersion: rbac.authorization.k8s.io/v1
    kind: ClusterRole
    metadata:
      name: %s
    rules:
      - apiGroups: [""]
        resources: ["configmaps"]
        verbs: ["%s"]
  YAML
  %s
}
`, name, verb, conn)
}

// A cluster-scoped object, reached through a kubeconfig and its client-certificate context.
func TestAccObject_clusterScopedWithKubeconfigContext(t *testing.T) {
	name := acctest.Name("role")
	conn := acctest.KubeconfigConnection(t, "k8sconnect-local-cert")
	var uid uidRecorder

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		CheckDestroy:             gone(t, clusterRoles, "", name),
		Steps: []resource.TestStep{
			{
				Config: clusterRoleConfig(conn, name, "get"),
				Check: resource.ComposeAggregateTestCheckFunc(
					uid.record(t, clusterRoles, "", name),
					resource.TestCheckResourceAttr("k8sconnect_object.role", "resource_ref.namespace", ""),
				),
			},
			{
				Config: clusterRoleConfig(conn, name, "list"),
				Check: resource.ComposeAggregateTestCheckFunc(
					uid.unchanged(t, clusterRoles, "", name),
					func(*terraform.State) error {
						obj, err := acctest.Get(t, clusterRoles, "", name)
						if err != nil || obj == nil {
							return fmt.Errorf("ClusterRole %s missing: %v", name, err)
						}
						rules, _ := obj.Object["rules"].([]any)
						verbs := rules[0].(map[string]any)["verbs"].([]any)
						if len(verbs) != 1 || verbs[0] != "list" {
							return fmt.Errorf("ClusterRole %s verbs = %v, want [list]", name, verbs)
						}
						return nil
					},
				),
			},
		},
	})
}

// A namespaced object without metadata.namespace lands in "default", and the
// current-context of the kubeconfig is used when context is not set.
func TestAccObject_defaultNamespaceAndCurrentContext(t *testing.T) {
	name := acctest.Name("cm")
	conn := acctest.KubeconfigConnection(t, "")
	config := fmt.Sprintf(`
resource "k8sconnect_object" "cm" {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: %s
    data:
      k: v
  YAML
  %s
}
`, name, conn)

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		CheckDestroy:             gone(t, configMaps, "default", name),
		Steps: []resource.TestStep{{
			Config: config,
			Check: resource.ComposeAggregateTestCheckFunc(
				configMapHas(t, "default", name, "k", "v"),
				resource.TestCheckResourceAttr("k8sconnect_object.cm", "resource_ref.namespace", "default"),
			),
		}},
	})
}

func TestAccObject_invalidYAMLFailsAtPlan(t *testing.T) {
	conn := acctest.Connection(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "k8sconnect_object" "bad" {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    data:
      k: v
  YAML
  %s
}
`, conn),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`yaml_body is missing metadata.name`),
		}},
	})
}

// Creating an object that already exists is refused at plan, whether or not the
// manifest names its namespace, and the existing object is left alone.
func TestAccObject_refusesToAdoptAnExistingObject(t *testing.T) {
	name := acctest.Name("taken")
	acctest.ApplyAs(t, "someone-else", configMaps, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: default}\ndata: {owner: them}\n", name))
	conn := acctest.Connection(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "k8sconnect_object" "cm" {
  yaml_body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata: {owner: us}\n"
  %s
}
`, name, conn),
			ExpectError: regexp.MustCompile(`already exists in the cluster and k8sconnect\s+does not manage it`),
		}},
	})
	if err := configMapHas(t, "default", name, "owner", "them")(nil); err != nil {
		t.Fatal(err)
	}
}

// An immutable field change plans a replacement instead of failing the apply.
func TestAccObject_immutableFieldPlansReplacement(t *testing.T) {
	ns, name, conn := acctest.Namespace(t), acctest.Name("frozen"), acctest.Connection(t)
	cfg := func(v string) string {
		return fmt.Sprintf(`
resource "k8sconnect_object" "frozen" {
  yaml_body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\nimmutable: true\ndata: {v: '%s'}\n"
  %s
}
`, name, ns, v, conn)
	}
	var uid uidRecorder
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{Config: cfg("1"), Check: uid.record(t, configMaps, ns, name)},
			{
				Config: cfg("2"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("k8sconnect_object.frozen", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					configMapHas(t, ns, name, "v", "2"),
					func(s *terraform.State) error {
						if err := uid.unchanged(t, configMaps, ns, name)(s); err == nil {
							return fmt.Errorf("the ConfigMap kept its UID: it was not replaced")
						}
						return nil
					},
				),
			},
		},
	})
}

// A connection that is unknown at plan (a cluster created in the same apply)
// plans with unknowns and applies.
func TestAccObject_connectionUnknownAtPlan(t *testing.T) {
	ns, name := acctest.Namespace(t), acctest.Name("boot")
	c := localcluster.Shared(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "terraform_data" "cluster" {
  input = { host = %q, ca = %q, token = %q }
}

resource "k8sconnect_object" "cm" {
  yaml_body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata: {k: v}\n"
  cluster_connection = {
    host                   = terraform_data.cluster.output.host
    cluster_ca_certificate = terraform_data.cluster.output.ca
    token                  = terraform_data.cluster.output.token
  }
}
`, c.Host, string(c.CAPEM), c.Token, name, ns),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectUnknownValue("k8sconnect_object.cm", tfjsonpath.New("managed_state_projection")),
			}},
			Check: configMapHas(t, ns, name, "k", "v"),
		}},
	})
}

// kubeconfig_file is read by the provider: a missing file fails the plan naming
// the path, and neither the file's content nor its token lands in state.
func TestAccObject_kubeconfigFile(t *testing.T) {
	ns, name := acctest.Namespace(t), acctest.Name("cm")
	c := localcluster.Shared(t)
	missing := filepath.Join(t.TempDir(), "no-kubeconfig")
	conn := func(path string) string {
		return fmt.Sprintf("cluster_connection = {\n    kubeconfig_file = %q\n  }", path)
	}

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		CheckDestroy:             gone(t, configMaps, ns, name),
		Steps: []resource.TestStep{
			{
				Config:      configMapConfig(conn(missing), ns, name, "hello"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`kubeconfig_file\s+"` + regexp.QuoteMeta(missing) + `"\s+cannot\s+be\s+read:\s+no\s+such\s+file`),
			},
			{
				Config: configMapConfig(conn(c.KubeconfigPath), ns, name, "hello"),
				Check: resource.ComposeAggregateTestCheckFunc(
					configMapHas(t, ns, name, "greeting", "hello"),
					resource.TestCheckResourceAttr("k8sconnect_object.cm", "cluster_connection.kubeconfig_file", c.KubeconfigPath),
					resource.TestCheckNoResourceAttr("k8sconnect_object.cm", "cluster_connection.kubeconfig"),
					func(s *terraform.State) error {
						for k, v := range s.RootModule().Resources["k8sconnect_object.cm"].Primary.Attributes {
							if strings.Contains(v, c.Token) {
								return fmt.Errorf("state attribute %s holds the kubeconfig's token", k)
							}
						}
						return nil
					},
				),
			},
		},
	})
}
