package helmtemplate_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

var (
	configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	shelves    = schema.GroupVersionResource{Group: "helmtemplate.k8sconnect.test", Version: "v1", Resource: "shelves"}
)

// chartConfig renders the shop chart into ns and applies every map but the
// hooks, each group after the one it needs, as the guide tells users to.
func chartConfig(t *testing.T, ns, extra string) string {
	conn := acctest.Connection(t)
	return fmt.Sprintf(`
resource "k8sconnect_object" "namespace" {
  yaml_body = jsonencode({ apiVersion = "v1", kind = "Namespace", metadata = { name = %[2]q } })
  %[1]s
}

data "k8sconnect_helm_template" "shop" {
  name      = "web"
  namespace = %[2]q
  chart     = %[3]q
  %[4]s
  %[1]s
}

resource "k8sconnect_object" "crds" {
  for_each  = data.k8sconnect_helm_template.shop.crds
  yaml_body = each.value
  %[1]s
}

resource "k8sconnect_object" "cluster_scoped" {
  for_each   = data.k8sconnect_helm_template.shop.cluster_scoped
  yaml_body  = each.value
  %[1]s
  depends_on = [k8sconnect_object.crds]
}

resource "k8sconnect_object" "namespaced" {
  for_each   = data.k8sconnect_helm_template.shop.namespaced
  yaml_body  = each.value
  %[1]s
  depends_on = [k8sconnect_object.cluster_scoped, k8sconnect_object.namespace]
}

resource "k8sconnect_object" "sensitive" {
  for_each   = toset(data.k8sconnect_helm_template.shop.sensitive_keys)
  yaml_body  = data.k8sconnect_helm_template.shop.sensitive[each.key]
  sensitive_fields = lookup(data.k8sconnect_helm_template.shop.sensitive_fields, each.key, null)
  %[1]s
  depends_on = [k8sconnect_object.namespace]
}
`, conn, ns, chartPath(t, "shop"), extra)
}

// The whole slice end to end: the chart renders against the cluster (its
// version, a live lookup), every object applies as a k8sconnect_object, and
// the next plan is empty because lookup read the generated password back
// instead of generating another; the Secret keeps its UID and its value.
func TestAccHelmTemplateAppliesPerObjectAndDoesNotChurn(t *testing.T) {
	ns := acctest.Name("helm")
	version, err := acctest.Clientset(t).Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	var firstUID, firstPassword string
	secretIs := func(record bool) acctest.ClusterCheck {
		return func() error {
			s, err := acctest.Get(t, secrets, ns, "web-shop-auth")
			if err != nil || s == nil {
				return fmt.Errorf("secret web-shop-auth: %v (present %v)", err, s != nil)
			}
			pw, _, _ := unstructured.NestedString(s.Object, "data", "password")
			if record {
				firstUID, firstPassword = string(s.GetUID()), pw
				return nil
			}
			if string(s.GetUID()) != firstUID || pw != firstPassword {
				return fmt.Errorf("the secret changed: uid %s -> %s, password changed %v", firstUID, s.GetUID(), pw != firstPassword)
			}
			return nil
		}
	}
	configMapHas := func(key, want string) acctest.ClusterCheck {
		return func() error {
			cm, err := acctest.Get(t, configMaps, ns, "web-shop")
			if err != nil || cm == nil {
				return fmt.Errorf("configmap web-shop: %v (present %v)", err, cm != nil)
			}
			if got, _, _ := unstructured.NestedString(cm.Object, "data", key); got != want {
				return fmt.Errorf("configmap data.%s = %q, want %q", key, got, want)
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{
				Config: chartConfig(t, ns, ""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.k8sconnect_helm_template.shop", tfjsonpath.New("kube_version"),
						knownvalue.StringExact(version.GitVersion)),
					statecheck.ExpectKnownValue("data.k8sconnect_helm_template.shop", tfjsonpath.New("hooks"),
						knownvalue.MapExact(map[string]knownvalue.Check{"batch/Job/" + ns + "/web-shop-migrate": knownvalue.NotNull()})),
					configMapHas("kube", version.GitVersion),
					secretIs(true),
					exists(t, shelves, ns, "web-shop"),
				},
			},
			{
				Config: chartConfig(t, ns, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{secretIs(false)},
			},
			{
				// Now that the CRD is served, templates see its API in
				// .Capabilities, which Helm's default list does not have.
				Config:            chartConfig(t, ns, `set = [{ name = "probeCapabilities", value = "true" }]`),
				ConfigStateChecks: []statecheck.StateCheck{configMapHas("shelves", "true"), secretIs(false)},
			},
			{
				// The for_each resources leave (destroyed in reverse order),
				// so the framework's final read of the state can shim it.
				Config: fmt.Sprintf("data \"k8sconnect_helm_template\" \"shop\" {\n  name = \"web\"\n  chart = %q\n}\n", chartPath(t, "shop")),
			},
		},
	})
}

func exists(t *testing.T, gvr schema.GroupVersionResource, ns, name string) acctest.ClusterCheck {
	return func() error {
		obj, err := acctest.Get(t, gvr, ns, name)
		if err != nil || obj == nil {
			return fmt.Errorf("%s %s/%s: %v (present %v)", gvr.Resource, ns, name, err, obj != nil)
		}
		return nil
	}
}
