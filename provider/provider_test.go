package provider_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

func TestMain(m *testing.M) { acctest.Main(m) }

var (
	namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// The quickstart a user reads is the configuration this test applies.
func TestAccQuickstartExample(t *testing.T) {
	ns := acctest.Name("quickstart")
	vars := func(greeting string) config.Variables {
		return config.Variables{
			"kubeconfig_path": config.StringVariable(localcluster.Shared(t).KubeconfigPath),
			"namespace":       config.StringVariable(ns),
			"greeting":        config.StringVariable(greeting),
		}
	}
	var uid string
	greetingIs := func(want string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			cm, err := acctest.Get(t, configMaps, ns, "greeting")
			if err != nil || cm == nil {
				return fmt.Errorf("ConfigMap %s/greeting not in the cluster (err=%v)", ns, err)
			}
			if got := cm.Object["data"].(map[string]any)["greeting"]; got != want {
				return fmt.Errorf("greeting = %v, want %q", got, want)
			}
			if uid == "" {
				uid = string(cm.GetUID())
			} else if string(cm.GetUID()) != uid {
				return fmt.Errorf("ConfigMap was recreated: uid %s, want %s", cm.GetUID(), uid)
			}
			return nil
		}
	}

	// The quickstart has a provider block (its connection), so the provider
	// is given per step: terraform-plugin-testing refuses both levels.
	resource.Test(t, resource.TestCase{
		CheckDestroy: func(*terraform.State) error {
			if obj, err := acctest.Get(t, namespaces, "", ns); err != nil || obj != nil {
				return fmt.Errorf("namespace %s still exists after destroy (err=%v)", ns, err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				ProtoV6ProviderFactories: acctest.Factories(),
				ConfigDirectory:          config.StaticDirectory("../examples/terraform/quickstart"),
				ConfigVariables:          vars("hello"),
				Check: resource.ComposeAggregateTestCheckFunc(
					greetingIs("hello"),
					resource.TestCheckOutput("configmap", ns+"/greeting"),
					noCredentialsInState(t),
				),
			},
			{
				ProtoV6ProviderFactories: acctest.Factories(),
				ConfigDirectory:          config.StaticDirectory("../examples/terraform/quickstart"),
				ConfigVariables:          vars("bonjour"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("k8sconnect_object.greeting", plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction("k8sconnect_object.namespace", plancheck.ResourceActionNoop),
					},
				},
				Check: greetingIs("bonjour"),
			},
		},
	})
}

// noCredentialsInState: the quickstart keeps its connection in the provider
// block, so no resource's state holds the kubeconfig's token or certificates,
// nor the kubeconfig's content.
func noCredentialsInState(t *testing.T) resource.TestCheckFunc {
	c := localcluster.Shared(t)
	return func(s *terraform.State) error {
		seen := 0
		for addr, r := range s.RootModule().Resources {
			for k, v := range r.Primary.Attributes {
				seen++
				if strings.Contains(v, c.Token) || strings.Contains(v, "BEGIN") || strings.Contains(v, "current-context") {
					return fmt.Errorf("%s.%s holds a credential or kubeconfig content", addr, k)
				}
			}
		}
		if seen == 0 {
			return fmt.Errorf("no attributes in state: the check would be blind")
		}
		return nil
	}
}
