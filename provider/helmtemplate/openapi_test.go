package helmtemplate_test

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// disable_openapi_validation on the data source, as on the release: the
// lenient chart's ConfigMap and hook set a field (color) that the cluster's
// ConfigMap schema lacks. Without it, applying the namespaced map fails at
// plan, naming the field; with it, both bodies are handed out without the
// field (and without a warning at every read), the ConfigMap applies with
// the fields the schema knows, and the next plan is empty.
func TestAccHelmTemplateDisableOpenAPIValidation(t *testing.T) {
	ns := acctest.Namespace(t)
	const name = "lax"
	config := func(more string) string { return lenientConfig(t, ns, name, "", more) }
	settings, hook := "core/ConfigMap/"+ns+"/"+name+"-settings", "core/ConfigMap/"+ns+"/"+name+"-hook"
	w := acctest.NewWorkdir(t)
	w.Cleanup()
	w.Write(config(""))
	r := w.Plan()
	if r.Err == nil || !r.HasError("Unknown field in yaml_body", `unknown field "color"`) {
		t.Fatalf("the unknown field should fail the plan, naming it: %v\n%s", r.Err, r.Output)
	}

	w.Write(config("disable_openapi_validation = true"))
	r = w.Plan()
	if r.Err != nil {
		t.Fatalf("plan with disable_openapi_validation: %v\n%s", r.Err, r.Output)
	}
	if ws := r.Warnings(); len(ws) != 0 {
		t.Errorf("the read should not warn, warns %v", ws)
	}
	w.MustApply()
	for key, body := range map[string]string{settings: stateMap[string](t, w, "namespaced")[settings],
		hook: stateMap[string](t, w, "hooks")[hook]} {
		if !strings.Contains(body, `"greeting":"hello"`) || strings.Contains(body, "color") {
			t.Errorf("%s should be handed out without color, with the rest: %q", key, body)
		}
	}
	if err := acctest.ConfigMapHas(t, ns, name+"-settings", "greeting", "hello"); err != nil {
		t.Error(err)
	}
	w.MustPlanNoChanges()
}

// Without a cluster there is no schema to check against: nothing is left
// out, as helm template --disable-openapi-validation leaves everything in.
func TestDisableOpenAPIValidationWithoutACluster(t *testing.T) {
	resp, out := readOffline(t, map[string]tftypes.Value{
		"name":                       str("web"),
		"chart":                      str(chartPath(t, "lenient")),
		"disable_openapi_validation": tftypes.NewValue(tftypes.Bool, true),
	})
	if resp.Diagnostics.HasError() {
		t.Fatal(resp.Diagnostics)
	}
	if body := stringMap(t, out["namespaced"])["core/ConfigMap/default/web-settings"]; !strings.Contains(body, `"color":"blue"`) {
		t.Errorf("without a cluster the body should be as rendered: %q", body)
	}
}
