package exacttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/exactcorpus"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// A field wait's status and the object data source's object are dynamic
// values: Terraform's numbers are arbitrary-precision, so integers at 2^53+1
// and at the int64 limits reach outputs with every digit, as numbers.
func TestAccExact_dynamicOutputsKeepEveryDigit(t *testing.T) {
	cluster := localcluster.Shared(t)
	exactcorpus.EnsureCRD(t, cluster.KubeconfigPath)
	ns := acctest.Namespace(t)
	limits := schemaOf(t, exactcorpus.Load(t, "corpus", ns), "int-limits")
	exactcorpus.Kubectl(t, cluster.KubeconfigPath, "apply", "--server-side", "-f",
		exactcorpus.Write(t, t.TempDir(), "", []exactcorpus.Doc{limits}))

	conn := acctest.Connection(t)
	w := acctest.NewWorkdir(t)
	w.Write(fmt.Sprintf(`
resource "k8sconnect_wait" "limits" {
  resource_ref = {
    api_version = %[1]q
    kind        = "Exact"
    namespace   = %[2]q
    name        = %[3]q
    %[4]s
  }
  wait_for = { field = "spec.free.two53plus1", timeout = "60s" }
}

data "k8sconnect_object" "limits" {
  api_version = %[1]q
  kind        = "Exact"
  namespace   = %[2]q
  name        = %[3]q
  %[4]s
}

output "status" { value = k8sconnect_wait.limits.status }
output "free"   { value = data.k8sconnect_object.limits.object.spec.free }
output "tags"   { value = data.k8sconnect_object.limits.object.spec.tags }
`, limits.APIVersion, ns, limits.Name, conn))
	w.Cleanup()
	w.MustApply()
	r := w.Run("output", "-json")
	if r.Err != nil {
		t.Fatalf("output: %v\n%s", r.Err, r.Output)
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(r.Output[strings.Index(r.Output, "{"):])))
	dec.UseNumber()
	var out map[string]struct{ Value any }
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("output -json: %v\n%s", err, r.Output)
	}
	status, _ := out["status"].Value.(map[string]any)
	free, _ := out["free"].Value.(map[string]any)
	for what, got := range map[string]any{
		"status spec.free.two53plus1":  exactcorpus.Field(status, "spec", "free", "two53plus1"),
		"object spec.free.two53plus1":  free["two53plus1"],
		"object spec.free.two63minus1": free["two63minus1"],
		"object spec.free.minInt64":    free["minInt64"],
		"object spec.tags[3]":          exactcorpus.Field(map[string]any{"t": out["tags"].Value}, "t", 3),
	} {
		want := map[string]string{
			"status spec.free.two53plus1": "9007199254740993", "object spec.free.two53plus1": "9007199254740993",
			"object spec.free.two63minus1": "9223372036854775807", "object spec.free.minInt64": "-9223372036854775808",
			"object spec.tags[3]": "-9223372036854775808",
		}[what]
		if n, ok := got.(json.Number); !ok || n.String() != want {
			t.Errorf("%s = %#v, want the number %s", what, got, want)
		}
	}
	expectNoChanges(t, w, "after the wait")
}
