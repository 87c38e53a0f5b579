package helmtemplate_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// A set_sensitive value reaches the cluster and never shows in plan or apply
// output, human or JSON, nor in state outside the attributes that hold it by
// design (the data source's set_sensitive and sensitive, the yaml_body fed
// from sensitive); nor does a value the chart generates into a Secret. A new
// value is planned as a change that shows no value.
func TestAccHelmTemplate_sensitiveValuesNeverInClear(t *testing.T) {
	ns := acctest.Name("helmsecret")
	first, second := acctest.NewSecretValue("greet"), acctest.NewSecretValue("greet2")
	config := func(v acctest.SecretValue) string {
		return chartConfig(t, ns, fmt.Sprintf(`set_sensitive = [{ name = "greeting", value = %q }]`, v.Plain))
	}
	w := acctest.NewWorkdir(t)
	w.Write(config(first))
	w.Cleanup()

	acctest.ExpectAbsent(t, "plan output", w.Human("plan").Output, first)
	acctest.ExpectAbsent(t, "apply output", w.Human("apply", "-auto-approve").Output, first)
	if err := acctest.ConfigMapHas(t, ns, "web-shop", "greeting", first.Plain); err != nil {
		t.Fatalf("the value did not reach the cluster: %v", err)
	}
	generated := acctest.MustGet(t, secrets, ns, "web-shop-auth")
	b64, _, _ := unstructured.NestedString(generated.Object, "data", "password")
	plain, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(plain) != 24 {
		t.Fatalf("the chart's generated password: %v (%d bytes)", err, len(plain))
	}
	password := acctest.SecretValue{Plain: string(plain)}

	outside, bodies, private := w.StateParts("yaml_body", "set_sensitive", "sensitive")
	acctest.ExpectPresent(t, "the attributes that hold it", bodies, first.Plain)
	acctest.ExpectAbsent(t, "state outside them", outside, first, password)
	acctest.ExpectAbsent(t, "private state", private, first, password)

	w.Write(config(second))
	plan := w.Plan()
	if plan.Err != nil {
		t.Fatalf("plan: %v\n%s", plan.Err, plan.Output)
	}
	if add, change, remove := plan.Changes(); add != 0 || change != 1 || remove != 0 {
		t.Errorf("a new set_sensitive value should change the one object that holds it; plan: +%d ~%d -%d\n%s", add, change, remove, plan.Output)
	}
	acctest.ExpectAbsent(t, "plan -json output of the change", plan.Output, first, second, password)
	acctest.ExpectAbsent(t, "plan output of the change", w.Human("plan").Output, first, second, password)
	acctest.ExpectAbsent(t, "apply output of the change", w.Human("apply", "-auto-approve").Output, first, second, password)
	if err := acctest.ConfigMapHas(t, ns, "web-shop", "greeting", second.Plain); err != nil {
		t.Errorf("the new value did not reach the cluster: %v", err)
	}
	raw, _ := json.Marshal(acctest.MustGet(t, secrets, ns, "web-shop-auth").Object)
	if !strings.Contains(string(raw), password.Base64()) {
		t.Errorf("the generated password changed on an unrelated change: lookup did not read it back")
	}
}
