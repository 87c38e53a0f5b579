package object_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// What a create cut short leaves behind: the object, carrying its would-be id
// and the pending marker, and no state. Re-running adopts it: same UID.
func TestAccObject_unfinishedCreateIsAdoptedOnRerun(t *testing.T) {
	ns, name, conn := acctest.Namespace(t), acctest.Name("orphan"), acctest.Connection(t)
	orphan := acctest.ApplyAs(t, "k8sconnect", configMaps, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  namespace: %s
  annotations: {k8sconnect.io/owned-by: 0123456789abcdef, k8sconnect.io/create-pending: 0123456789abcdef}
data: {greeting: hello}
`, name, ns))
	uid := uidRecorder{uid: string(orphan.GetUID())}

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{{
			Config: configMapConfig(conn, ns, name, "hello"),
			Check: resource.ComposeAggregateTestCheckFunc(
				uid.unchanged(t, configMaps, ns, name),
				func(*terraform.State) error {
					obj, _ := acctest.Get(t, configMaps, ns, name)
					if _, pending := obj.GetAnnotations()["k8sconnect.io/create-pending"]; pending {
						return fmt.Errorf("the pending marker is still on the object after a successful create")
					}
					return nil
				},
			),
		}},
	})
}

// An object another k8sconnect resource manages (its create finished) is never adopted.
func TestAccObject_finishedObjectOfAnotherResourceIsRefused(t *testing.T) {
	ns, name, conn := acctest.Namespace(t), acctest.Name("theirs"), acctest.Connection(t)
	acctest.ApplyAs(t, "k8sconnect", configMaps, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  namespace: %s
  annotations: {k8sconnect.io/owned-by: fedcba9876543210}
data: {greeting: theirs}
`, name, ns))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{{
			Config:      configMapConfig(conn, ns, name, "ours"),
			ExpectError: regexp.MustCompile(`carries the id\s+fedcba9876543210\s+of\s+another\s+k8sconnect\s+resource`),
		}},
	})
	if err := configMapHas(t, ns, name, "greeting", "theirs")(nil); err != nil {
		t.Fatal(err)
	}
}
