package object_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/k8sconnect/k8sconnect/provider/acctest"
)

func heldConfigMap(conn, ns, name, extra string) string {
	return fmt.Sprintf(`
resource "k8sconnect_object" "held" {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: %s
      namespace: %s
      finalizers: ["example.com/hold"]
    data: {k: v}
  YAML
  delete_timeout = "2s"
  %s
  %s
}
`, name, ns, extra, conn)
}

// A destroy that times out says which finalizers hold the object; force_destroy
// removes them.
func TestAccObject_deleteTimeoutNamesFinalizersAndForceDestroyClears(t *testing.T) {
	ns, name, conn := acctest.Namespace(t), acctest.Name("held"), acctest.Connection(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		CheckDestroy:             gone(t, configMaps, ns, name),
		Steps: []resource.TestStep{
			{Config: heldConfigMap(conn, ns, name, "")},
			{
				Config:      heldConfigMap(conn, ns, name, ""),
				Destroy:     true,
				ExpectError: regexp.MustCompile(`waits for finalizers: example.com/hold`),
			},
			{Config: heldConfigMap(conn, ns, name, "force_destroy = true")},
		},
	})
}

func TestAccObject_deleteProtection(t *testing.T) {
	ns, name, conn := acctest.Namespace(t), acctest.Name("cm"), acctest.Connection(t)
	cfg := func(protect bool) string {
		return fmt.Sprintf(`
resource "k8sconnect_object" "cm" {
  yaml_body         = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\n"
  delete_protection = %t
  %s
}
`, name, ns, protect, conn)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		CheckDestroy:             gone(t, configMaps, ns, name),
		Steps: []resource.TestStep{
			{Config: cfg(true)},
			{Config: cfg(true), Destroy: true, ExpectError: regexp.MustCompile(`delete_protection = true`)},
			{Config: cfg(false), Check: exists(t, configMaps, ns, name)},
		},
	})
}
