package object_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
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
			{Config: cfg(false), Check: acctest.Exists(t, configMaps, ns, name)},
		},
	})
}

var namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// A Namespace that cannot finish terminating: the timeout says what is left
// inside and which finalizer holds it, as the namespace controller reports.
func TestAccObject_namespaceDeleteTimeoutListsWhatIsLeftInside(t *testing.T) {
	name, conn := acctest.Name("ns"), acctest.Connection(t)
	cs := acctest.Clientset(t)
	ctx := context.Background()
	release := func() error {
		_, err := cs.CoreV1().ConfigMaps(name).Patch(ctx, "held", ktypes.MergePatchType,
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	t.Cleanup(func() {
		if err := release(); err != nil {
			t.Errorf("releasing ConfigMap %s/held: %v", name, err)
		}
	})
	config := fmt.Sprintf(`
resource "k8sconnect_object" "ns" {
  yaml_body      = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n"
  delete_timeout = "3s"
  %s
}
`, name, conn)

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		CheckDestroy:             gone(t, namespaces, "", name),
		Steps: []resource.TestStep{
			{Config: config, Check: acctest.Exists(t, namespaces, "", name)},
			{
				// The namespace controller reports leftovers only after its first
				// pass over the namespace (about 5s here), longer than a short
				// delete_timeout. Deletion starts here, as kubectl would start it,
				// and the destroy runs once the report is there, so the assertion
				// does not race the controller.
				PreConfig: func() {
					_, err := cs.CoreV1().ConfigMaps(name).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
						Name: "held", Finalizers: []string{"k8sconnect.test/block"},
					}}, metav1.CreateOptions{})
					if err != nil {
						t.Fatalf("creating ConfigMap %s/held: %v", name, err)
					}
					if err := cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
						t.Fatalf("deleting namespace %s: %v", name, err)
					}
					err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
						ns, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
						if err != nil {
							return false, err
						}
						for _, c := range ns.Status.Conditions {
							if c.Type == corev1.NamespaceFinalizersRemaining && c.Status == corev1.ConditionTrue {
								return true, nil
							}
						}
						return false, nil
					})
					if err != nil {
						t.Fatalf("namespace %s: the controller did not report the finalizer left inside: %v", name, err)
					}
				},
				Config:  config,
				Destroy: true,
				ExpectError: regexp.MustCompile(`still\s+exists\s+3s\s+after\s+deletion\s+was\s+requested\.\s+` +
					`Some\s+resources\s+are\s+remaining:\s+configmaps\.\s+has\s+1\s+resource\s+instances\s+` +
					`Some\s+content\s+in\s+the\s+namespace\s+has\s+finalizers\s+remaining:\s+k8sconnect\.test/block\s+in\s+1\s+resource\s+instances\s+` +
					`The\s+Namespace\s+goes\s+once\s+everything\s+in\s+it\s+is\s+gone[\s\S]*remove\s+those\s+finalizers\s+from\s+the\s+objects\s+left\s+inside`),
			},
			{
				// Once the finalizer is released and the namespace is gone, a
				// refresh drops it from state, leaving nothing to destroy.
				PreConfig: func() {
					if err := release(); err != nil {
						t.Fatalf("releasing ConfigMap %s/held: %v", name, err)
					}
					err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
						_, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
						return apierrors.IsNotFound(err), nil
					})
					if err != nil {
						t.Fatalf("namespace %s still exists 2m after its last finalizer was released", name)
					}
				},
				RefreshState:       true,
				ExpectNonEmptyPlan: true,
				Check: func(s *terraform.State) error {
					if _, ok := s.RootModule().Resources["k8sconnect_object.ns"]; ok {
						return fmt.Errorf("namespace %s is gone but k8sconnect_object.ns is still in state", name)
					}
					return nil
				},
			},
		},
	})
}
