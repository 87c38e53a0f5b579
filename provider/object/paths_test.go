package object_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// ignore_fields in the kubectl JSONPath forms users bring from other providers
// (a filter, [?(@.name=='app')], and [*] for every element) works as the
// [name=app] form does: the fields are handed over, another manager's changes
// to them plan nothing, and field_ownership names that manager under the
// canonical path.
func TestAccObject_ignoreFieldsInJSONPathForms(t *testing.T) {
	ns := acctest.Namespace(t)
	c := acctest.Connection(t)
	w := acctest.NewWorkdir(t)
	config := func(ignore string) string {
		return fmt.Sprintf(`
resource "k8sconnect_object" "web" {
  yaml_body = <<-YAML
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web, namespace: %[1]s}
    spec:
      replicas: 1
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec:
          containers:
            - name: app
              image: nginx:1.27
              env: [{name: LOG_LEVEL, value: info}, {name: MODE, value: fast}]
            - name: sidecar
              image: envoy:v1.30
  YAML
  ignore_fields = [%[2]s]
  %[3]s
}
`, ns, ignore, c)
	}
	w.Write(config(""))
	w.Cleanup()
	w.MustApply()

	w.Write(config(`"spec.template.spec.containers[?(@.name=='app')].env[?(@.name=='LOG_LEVEL')].value", ` +
		`"spec.template.spec.containers[*].image"`))
	w.MustApply()
	// An operator turns up the log level and an image updater bumps both images.
	acctest.ApplyAs(t, "image-updater", deployments, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %s}
spec:
  template:
    spec:
      containers:
        - {name: app, image: "nginx:1.28", env: [{name: LOG_LEVEL, value: debug}]}
        - {name: sidecar, image: "envoy:v1.31"}
`, ns))
	w.MustPlanNoChanges()
	if r := w.Run("apply", "-refresh-only", "-auto-approve", "-input=false", "-no-color"); r.Err != nil {
		t.Fatalf("refresh: %v\n%s", r.Err, r.Output)
	}
	owners := w.StateAttribute("k8sconnect_object.web", "field_ownership")
	for _, want := range []string{`spec.template.spec.containers[name=app].env[name=LOG_LEVEL].value`, `spec.template.spec.containers[name=sidecar].image`} {
		if !strings.Contains(owners, want) || !strings.Contains(owners, "image-updater") {
			t.Errorf("field_ownership should list %s under image-updater:\n%s", want, owners)
		}
	}
	// MODE is still ours: a change to it is drift.
	acctest.ApplyAs(t, "kubectl-edit", deployments, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %s}
spec:
  template:
    spec:
      containers:
        - {name: app, image: "nginx:1.28", env: [{name: MODE, value: slow}]}
`, ns))
	if r := w.Plan(); r.Err != nil {
		t.Fatalf("plan: %v\n%s", r.Err, r.Output)
	} else if _, change, _ := r.Changes(); change != 1 {
		t.Errorf("a change to a field still ours should plan an update, got %d\n%s", change, r.Output)
	}

	// A filter that is not a selector is refused at plan time, with the forms that work.
	w.Write(config(`"spec.template.spec.containers[?(@.image=~/nginx/)].image"`))
	bad := w.Plan()
	w.MustFail(bad, "plan with an unsupported JSONPath filter")
	if !strings.Contains(bad.Output, "Invalid ignore_fields entry") || !strings.Contains(bad.Output, "accepted forms") {
		t.Errorf("the error should name the entry and the accepted forms:\n%s", bad.Output)
	}
	w.Write(config(""))
}
