package bridge_test

import (
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/bundles"
)

// One field changed deep inside an 830 KB CRD, given as the JSON the
// yamlSplit and yamlScoped functions hand out: the preview names yamlBody
// alone, --diff marks the one changed field, the up changes it in place
// without replacing the CRD, and the next preview is empty.
func TestPulumiObject_oneFieldDeepInsideALargeCRDPreviewsAlone(t *testing.T) {
	group := strings.ToLower(acctest.Name("big")) + ".k8sconnect.test"
	crd := bundles.CRD(group, "Big", 830_000)
	widened, field := bundles.WidenDeepestInt32(crd)
	if field == "" {
		t.Fatal("the generated CRD has no int32 property to widen")
	}
	asJSON := func(text string) string {
		b, err := yaml.YAMLToJSON([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	stack := newObjectStack(t, objects{"crd": {body: asJSON(crd)}})
	expectChanges(t, stack.Run(pulumitest.Up, nil), map[string]int{"create": 2}) // the stack and the CRD
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	uid := acctest.UID(t, crds, "", "bigs."+group)

	stack.WriteYAML(objects{"crd": {body: asJSON(widened)}}.program(t))
	preview := stack.Run(pulumitest.Preview, nil)
	expectChanges(t, preview, map[string]int{"same": 1, "update": 1})
	if !strings.Contains(preview.Log, "[diff: ~yamlBody]") {
		t.Errorf("preview does not name yamlBody alone as changed:\n%.3000s", preview.Log)
	}
	// --diff prints a changed input that holds JSON or YAML as the whole
	// document with the change marked (Pulumi's display: 11,700 lines here),
	// and no outputs: the widened format shows once.
	detailed := stack.Run(pulumitest.Preview, nil, "--diff")
	if n := len(regexp.MustCompile(`format\s*:\s*"int32"\s*=>\s*"int64"`).FindAllString(detailed.Log, -1)); n != 1 {
		t.Errorf("preview --diff shows the widened format %d times, want once (yamlBody)", n)
	}
	if !strings.Contains(detailed.Log, field) {
		t.Errorf("preview --diff does not name the changed property %s", field)
	}

	expectChanges(t, stack.Run(pulumitest.Up, nil), map[string]int{"same": 1, "update": 1})
	// The stack keeps spec.versions once, in yamlBody: its projection holds
	// the value's length and digest (docs/adr/0015-large-values-by-digest.md).
	exported := stack.CLI("stack", "export")
	if !regexp.MustCompile(`"spec\.versions":\s*"\(\d{6} bytes, sha256:[0-9a-f]{64}\)"`).MatchString(exported) {
		t.Errorf("the stack's managedStateProjection does not hold spec.versions by its digest")
	}
	if n := strings.Count(exported, `\"`+field+`\"`); n != 2 {
		t.Errorf("the stack holds the changed property %s %d times, want twice (yamlBody's input and output)", field, n)
	}
	live := acctest.MustGet(t, crds, "", "bigs."+group)
	if string(live.GetUID()) != uid {
		t.Errorf("the CRD was replaced: UID %s, was %s", live.GetUID(), uid)
	}
	if got := bundles.PropertyFormat(live.Object, field); got != "int64" {
		t.Errorf("%s in the cluster has format %q, want int64", field, got)
	}
	expectChanges(t, stack.Run(pulumitest.Preview, nil), map[string]int{"same": 2})

	// Someone narrows the property back: a refreshed preview shows the
	// update and warns which field inside spec.versions the up restores.
	acctest.PatchAs(t, "someone-else", crds, "", "bigs."+group, bundles.VersionsPatch(crd))
	drift := stack.Run(pulumitest.Preview, nil, pulumitest.RefreshFirst)
	expectChanges(t, drift, map[string]int{"same": 1, "update": 1})
	if !strings.Contains(drift.Log, "A large value changes") || !strings.Contains(drift.Log, `format: "int32" -> "int64"`) {
		t.Errorf("the refreshed preview does not warn which field changes inside spec.versions:\n%.3000s", drift.Log)
	}
	expectChanges(t, stack.Run(pulumitest.Up, nil, pulumitest.RefreshFirst), map[string]int{"same": 1, "update": 1})
	if got := bundles.PropertyFormat(acctest.MustGet(t, crds, "", "bigs."+group).Object, field); got != "int64" {
		t.Errorf("%s in the cluster has format %q after the up, want int64 restored", field, got)
	}
}
