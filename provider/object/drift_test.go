package object_test

import (
	"fmt"
	"regexp"
	"sort"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/fixtures"
)

func configMapWithKeys(conn, ns, name string, data map[string]string, ignore ...string) string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys) // a stable yaml_body: map order must not look like a change
	body := ""
	for _, k := range keys {
		body += fmt.Sprintf("      %s: %q\n", k, data[k])
	}
	ignoreHCL := ""
	if len(ignore) > 0 {
		ignoreHCL = "ignore_fields = ["
		for i, p := range ignore {
			if i > 0 {
				ignoreHCL += ", "
			}
			ignoreHCL += fmt.Sprintf("%q", p)
		}
		ignoreHCL += "]"
	}
	return fmt.Sprintf(`
resource "k8sconnect_object" "cm" {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: %s
      namespace: %s
    data:
%s  YAML
  %s
  %s
}
`, name, ns, body, ignoreHCL, conn)
}

// A field we own, changed by someone else, shows as a diff and is reverted; a
// field someone else adds shows nothing.
func TestAccObject_driftOnOwnedFieldsOnly(t *testing.T) {
	ns, name, conn := acctest.Namespace(t), acctest.Name("cm"), acctest.Connection(t)
	cfg := configMapWithKeys(conn, ns, name, map[string]string{"mode": "safe"})

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				// Someone adds a key and a label we never declared: nothing to do.
				PreConfig: func() {
					acctest.PatchAs(t, "kubectl-edit", configMaps, ns, name,
						`{"metadata":{"labels":{"team":"ops"}},"data":{"extra":"theirs"}}`)
				},
				Config:   cfg,
				PlanOnly: true,
			},
			{
				// Someone changes a key we own: the plan shows the revert, apply does it.
				PreConfig: func() {
					acctest.PatchAs(t, "kubectl-edit", configMaps, ns, name, `{"data":{"mode":"fast"}}`)
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("k8sconnect_object.cm", plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue("k8sconnect_object.cm",
							tfjsonpath.New("managed_state_projection").AtMapKey("data.mode"), knownvalue.StringExact("safe")),
					},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					configMapHas(t, ns, name, "mode", "safe"),
					configMapHas(t, ns, name, "extra", "theirs"),
				),
			},
		},
	})
}

// ignore_fields releases a field to another manager: its changes never show,
// and field_ownership says who has it.
func TestAccObject_ignoreFieldsReleasesOwnership(t *testing.T) {
	ns, name, conn := acctest.Namespace(t), acctest.Name("cm"), acctest.Connection(t)
	data := map[string]string{"owned": "ours", "shared": "initial"}

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{Config: configMapWithKeys(conn, ns, name, data)},
			{
				Config: configMapWithKeys(conn, ns, name, data, "data.shared"),
				PreConfig: func() {
					acctest.ApplyAs(t, "config-operator", configMaps, fmt.Sprintf(
						"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {shared: initial}\n", name, ns))
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("k8sconnect_object.cm",
						tfjsonpath.New("managed_state_projection"), knownvalue.MapExact(map[string]knownvalue.Check{
							"data.owned": knownvalue.StringExact("ours"),
						})),
					statecheck.ExpectKnownValue("k8sconnect_object.cm",
						tfjsonpath.New("field_ownership").AtMapKey("data.shared"),
						knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("config-operator")})),
				},
			},
			{
				PreConfig: func() {
					acctest.ApplyAs(t, "config-operator", configMaps, fmt.Sprintf(
						"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {shared: changed}\n", name, ns))
				},
				Config:   configMapWithKeys(conn, ns, name, data, "data.shared"),
				PlanOnly: true,
			},
		},
	})
}

// Shared ownership: another manager applying the same value becomes a co-owner,
// listed next to us, and the plan stays empty.
func TestAccObject_coOwnerWithSameValueIsListedAndSilent(t *testing.T) {
	ns, name, conn := acctest.Namespace(t), acctest.Name("cm"), acctest.Connection(t)
	cfg := configMapWithKeys(conn, ns, name, map[string]string{"replicas": "3"})

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: func() {
					acctest.ApplyAs(t, "horizontal-pod-autoscaler", configMaps, fmt.Sprintf(
						"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {replicas: \"3\"}\n", name, ns))
				},
				Config: cfg,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("k8sconnect_object.cm",
						tfjsonpath.New("field_ownership").AtMapKey("data.replicas"),
						knownvalue.ListExact([]knownvalue.Check{
							knownvalue.StringExact("horizontal-pod-autoscaler"), knownvalue.StringExact("k8sconnect"),
						})),
				},
			},
			{Config: cfg, PlanOnly: true},
		},
	})
}

// The server's normal form of a quantity is what the projection holds, so
// writing 1024Mi never shows as a diff against the stored 1Gi.
func TestAccObject_normalisedValuesDoNotDiff(t *testing.T) {
	ns, name, conn := acctest.Namespace(t), acctest.Name("quota"), acctest.Connection(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "k8sconnect_object" "quota" {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: ResourceQuota
    metadata:
      name: %s
      namespace: %s
    spec:
      hard:
        requests.memory: 1024Mi
        requests.cpu: 1000m
        pods: "10"
  YAML
  %s
}
`, name, ns, conn),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("k8sconnect_object.quota",
					tfjsonpath.New("managed_state_projection").AtMapKey(`spec.hard["requests.memory"]`), knownvalue.StringExact("1Gi")),
				statecheck.ExpectKnownValue("k8sconnect_object.quota",
					tfjsonpath.New("managed_state_projection").AtMapKey(`spec.hard["requests.cpu"]`), knownvalue.StringExact("1")),
			},
		}},
	})
}

func TestAccObject_badInputFailsAtPlanAndAppliesNothing(t *testing.T) {
	ns, conn := acctest.Namespace(t), acctest.Connection(t)
	cases := map[string]struct{ body, ignore, want string }{
		"unknown field": {
			body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad-field\n  namespace: " + ns + "\ndata: {a: b}\nspecification: {}\n",
			want: `unknown field "specification"`,
		},
		"namespace on a cluster-scoped kind": {
			body: "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: bad-scope\n  namespace: " + ns + "\nrules: []\n",
			want: `ClusterRole is cluster-scoped`,
		},
		"invalid ignore path": {
			body:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad-ignore\n  namespace: " + ns + "\n",
			ignore: `["data..x"]`,
			want:   `empty field name`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ignore := ""
			if tc.ignore != "" {
				ignore = "ignore_fields = " + tc.ignore
			}
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.Factories(),
				Steps: []resource.TestStep{{
					Config:      fmt.Sprintf("resource \"k8sconnect_object\" \"bad\" {\n  yaml_body = %q\n  %s\n  %s\n}\n", tc.body, ignore, conn),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(regexp.QuoteMeta(tc.want)),
				}},
			})
		})
	}
}

var customResources = schema.GroupVersionResource{Group: "demo.k8sconnect.io", Version: "v1", Resource: "widgets"}

// A CRD and an object of its kind, and a namespace and an object in it, in one
// apply with no depends_on.
func TestAccObject_orderingWithoutDependsOn(t *testing.T) {
	ns, conn := acctest.Name("ordered"), acctest.Connection(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "k8sconnect_object" "crd" {
  yaml_body = %[3]q
  %[2]s
}

resource "k8sconnect_object" "namespace" {
  yaml_body = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %[1]s\n"
  %[2]s
}

resource "k8sconnect_object" "widget" {
  yaml_body = <<-YAML
    apiVersion: demo.k8sconnect.io/v1
    kind: Widget
    metadata:
      name: w1
      namespace: %[1]s
    spec:
      size: 3
  YAML
  %[2]s
}
`, ns, conn, fixtures.CRD("demo.k8sconnect.io", "Widget", "size: {type: integer}")),
			Check: func(*terraform.State) error {
				w, err := acctest.Get(t, customResources, ns, "w1")
				if err != nil || w == nil {
					return fmt.Errorf("Widget %s/w1 not in the cluster (err=%v)", ns, err)
				}
				return nil
			},
		}},
	})
}
