package ownership

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
)

// A Secret key changed by kubectl: the drift is detected by comparing keyed
// hashes, and the warning names the key and the manager but no value.
func TestSensitiveDriftIsDetectedWithoutValues(t *testing.T) {
	const recordedValue, liveValue = "b2xkLXNlY3JldC12YWx1ZQ==", "bmV3LXNlY3JldC12YWx1ZQ=="
	live := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db","namespace":"prod",
		"managedFields":[
		 {"manager":"k8sconnect","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:password":{}}}},
		 {"manager":"kubectl-edit","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:password":{}}}}]},
		"data":{"password":"`+liveValue+`"}}`), &live.Object); err != nil {
		t.Fatal(err)
	}
	red := sensitive.New("resource-id", nil)
	p := objectpath.MustParse("data.password")
	hash := red.Render(live.Object, p, recordedValue)
	report, _, _, err := Analyze(Plan{Subject: "Secret prod/db", Manager: "k8sconnect", Live: live,
		Recorded: map[string]string{"data.password": hash}, Planned: map[string]string{"data.password": hash}, Redactor: red})
	if err != nil {
		t.Fatal(err)
	}
	fs := report.Fields(DriftRevert)
	if len(fs) != 1 {
		t.Fatalf("drift not detected: %+v", report)
	}
	msgs := report.Messages(Conflicts)
	if len(msgs) != 1 {
		t.Fatalf("messages: %+v", msgs)
	}
	text := msgs[0].Summary + msgs[0].Detail
	if !strings.Contains(text, "data.password: changed (sensitive: values not shown) (changed by kubectl-edit)") {
		t.Errorf("message does not name the key and the manager:\n%s", text)
	}
	for _, v := range []string{recordedValue, liveValue, "old-secret-value", "new-secret-value", "hmac"} {
		if strings.Contains(text, v) {
			t.Errorf("message holds %q:\n%s", v, text)
		}
	}
	// The same live value as recorded is no drift.
	same, _, _, _ := Analyze(Plan{Subject: "Secret prod/db", Manager: "k8sconnect", Live: live,
		Recorded: map[string]string{"data.password": red.Render(live.Object, p, liveValue)},
		Planned:  map[string]string{"data.password": red.Render(live.Object, p, liveValue)}, Redactor: red})
	if n := len(same.Fields(DriftRevert)); n != 0 {
		t.Errorf("unchanged value reported as drift")
	}
	// An update conflict hides values too.
	r := Report{Subject: "Secret prod/db"}
	r.Add(Field{Path: "data.password", Transition: Transition{Prev: true, Now: true, Config: true, External: true},
		Live: red.Render(live.Object, p, liveValue), Recorded: hash, Planned: red.Render(live.Object, p, "eA=="), Managers: []string{"kubectl"}})
	if d := r.Messages(Conflicts)[0].Detail; strings.Contains(d, "hmac") || !strings.Contains(d, "data.password") {
		t.Errorf("update conflict: %s", d)
	}
}
