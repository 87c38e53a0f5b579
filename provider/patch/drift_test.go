package patch_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// Scenario 5 (and ADR 0008 through a patch): a controller keeps writing a patched
// field; the next plan shows the drift, naming the controller, and apply
// re-applies the patch.
func TestAccPatch_driftNamesTheController(t *testing.T) {
	t.Parallel()
	ns, conn := acctest.Namespace(t), acctest.Connection(t)
	configMapAs(t, "tool", ns, "tuned", `{level: "low"}`)
	w := acctest.NewWorkdir(t)
	w.Write(fmt.Sprintf(`
resource "k8sconnect_patch" "tune" {
  target = { api_version = "v1", kind = "ConfigMap", name = "tuned", namespace = %q }
  patch  = "data:\n  level: high\n"
  take_ownership = true
  %s
}
`, ns, conn))
	first := w.MustApply()
	w.Cleanup()
	var takeover string
	for _, d := range first.Warnings() {
		if d.Summary == "Field ownership override" {
			takeover = d.Detail
		}
	}
	if !strings.Contains(takeover, "data.level (from tool)") {
		t.Fatalf("create did not warn about taking data.level from tool: %+v", first.Warnings())
	}

	configMapAs(t, "level-controller", ns, "tuned", `{level: "medium"}`)
	plan := w.Plan()
	ws := plan.Warnings()
	if plan.Err != nil || len(ws) != 1 || !strings.Contains(ws[0].Detail, "data.level: medium -> high (changed by level-controller)") {
		t.Fatalf("want one drift warning naming level-controller, got err=%v %+v\n%s", plan.Err, ws, plan.Output)
	}
	// A patch has no ignore_fields to offer.
	if d := ws[0].Detail; !strings.Contains(d, `To let level-controller manage them, remove them from the patch: ["data.level"]`) || strings.Contains(d, "ignore_fields") {
		t.Fatalf("the drift warning's remedy does not fit a patch:\n%s", d)
	}
	w.MustApply()
	if got := acctest.MustGet(t, configMaps, ns, "tuned").Object["data"].(map[string]any)["level"]; got != "high" {
		t.Fatalf("level after apply = %v, want high", got)
	}
}
