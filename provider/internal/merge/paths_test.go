package merge

import (
	"reflect"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

func pathStrings(ps []objectpath.Path) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// The aws-node patch of ADR 0006: proxy settings added to one container of a
// DaemonSet someone else manages.
func TestPathsAWSNodeEnv(t *testing.T) {
	ps, err := Paths(obj(t, `
spec:
  template:
    spec:
      containers:
      - name: aws-node
        env:
        - {name: HTTP_PROXY, value: "http://proxy:3128"}
        - {name: NO_PROXY, value: ".svc,.cluster.local"}
`), fixtureType(t, daemonSetGVK))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"spec.template.spec.containers[name=aws-node].env[name=HTTP_PROXY].name",
		"spec.template.spec.containers[name=aws-node].env[name=HTTP_PROXY].value",
		"spec.template.spec.containers[name=aws-node].env[name=NO_PROXY].name",
		"spec.template.spec.containers[name=aws-node].env[name=NO_PROXY].value",
		"spec.template.spec.containers[name=aws-node].name",
	}
	if got := pathStrings(ps); !reflect.DeepEqual(got, want) {
		t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	// They address the fields in the merged object.
	merged := mustMerge(t, fixtureType(t, daemonSetGVK), `
spec: {template: {spec: {containers: [{name: aws-node, image: cni}]}}}`, `
spec: {template: {spec: {containers: [{name: aws-node, env: [{name: HTTP_PROXY, value: "http://proxy:3128"}]}]}}}`)
	if v, ok := ps[1].Get(merged); !ok || v != "http://proxy:3128" {
		t.Errorf("%s in the merged object: %v, %v", ps[1], v, ok)
	}
}

func TestPathsSetsDefaultsAndQuotedKeys(t *testing.T) {
	ps, err := Paths(obj(t, `
metadata:
  labels: {app.kubernetes.io/name: web}
  finalizers: [example.com/protect]
  annotations: {gone: null}
spec:
  replicas: 3
  strategy: {$patch: delete}
  template:
    spec:
      tolerations: [{key: a, operator: Exists}]
      containers:
      - name: app
        ports: [{containerPort: 8080}]
      - {name: old, $patch: delete}
`), fixtureType(t, deploymentGVK))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`metadata.finalizers[=example.com/protect]`,
		`metadata.labels["app.kubernetes.io/name"]`,
		`spec.replicas`,
		`spec.template.spec.containers[name=app].name`,
		`spec.template.spec.containers[name=app].ports[containerPort=8080,protocol=TCP].containerPort`,
		`spec.template.spec.tolerations`,
	}
	if got := pathStrings(ps); !reflect.DeepEqual(got, want) {
		t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestPathsRefusesUnknownFields(t *testing.T) {
	_, err := Paths(obj(t, `spec: {members: [{name: a, colour: red}]}`), fixtureType(t, widgetGVK))
	if err == nil || !strings.Contains(err.Error(), "spec.members[name=a].colour: no such field") {
		t.Errorf("unknown field: %v", err)
	}
}
