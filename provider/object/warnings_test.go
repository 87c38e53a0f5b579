package object_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// The API server's own warnings reach the user as plan warnings, as kubectl
// prints them: a deprecated node label in a Pod template, and a custom
// resource version its CRD marks deprecated.
func TestAccObject_serverWarningsReachThePlan(t *testing.T) {
	t.Parallel()
	ns, conn := acctest.Namespace(t), acctest.Connection(t)
	group := acctest.Name("old") + ".example.com"
	w := acctest.NewWorkdir(t)
	crd := fmt.Sprintf(`
resource "k8sconnect_object" "crd" {
  yaml_body = <<-YAML
    apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata: {name: gadgets.%[1]s}
    spec:
      group: %[1]s
      scope: Namespaced
      names: {plural: gadgets, singular: gadget, kind: Gadget}
      versions:
        - name: v1beta1
          served: true
          storage: true
          deprecated: true
          deprecationWarning: "%[1]s/v1beta1 Gadget is going away: move to v1"
          schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
  YAML
  %[2]s
}
`, group, conn)
	w.Write(crd)
	w.Cleanup()
	w.MustApply()
	w.Write(crd + fmt.Sprintf(`
resource "k8sconnect_object" "gadget" {
  yaml_body = <<-YAML
    apiVersion: %[1]s/v1beta1
    kind: Gadget
    metadata: {name: g, namespace: %[3]s}
    spec: {size: 1}
  YAML
  %[2]s
}

resource "k8sconnect_object" "web" {
  yaml_body = <<-YAML
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web, namespace: %[3]s}
    spec:
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec:
          nodeSelector: {beta.kubernetes.io/os: linux}
          containers: [{name: app, image: nginx:1.27}]
  YAML
  %[2]s
}
`, group, conn, ns))
	r := w.Plan()
	if r.Err != nil {
		t.Fatalf("plan: %v\n%s", r.Err, r.Output)
	}
	var deprecatedVersion, deprecatedLabel bool
	for _, d := range r.Warnings() {
		if !strings.HasPrefix(d.Summary, "The API server warns about") {
			continue
		}
		deprecatedVersion = deprecatedVersion || strings.Contains(d.Detail, "Gadget is going away: move to v1")
		deprecatedLabel = deprecatedLabel || (strings.Contains(d.Summary, "Deployment") && strings.Contains(d.Detail, "beta.kubernetes.io/os") && strings.Contains(d.Detail, "deprecated"))
	}
	if !deprecatedVersion || !deprecatedLabel {
		t.Fatalf("the plan should carry the server's warnings (deprecated version %v, deprecated label %v): %+v", deprecatedVersion, deprecatedLabel, r.Warnings())
	}
}
