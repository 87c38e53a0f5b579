package object_test

// The answers table's columns beyond k8sconnect_object's update: its create
// and the plan of a create, and the resources that hold a set of objects
// (k8sconnect_helm_release, k8sconnect_manifest_set), each holding the one
// ConfigMap the proxy answers for.

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/faultproxy"
)

// dryRunOf is the server-side dry run (a plan's) of one ConfigMap.
func dryRunOf(e *answerEnv) faultproxy.Match {
	return faultproxy.Match{Method: http.MethodPatch, Path: "/configmaps/" + e.name, Query: []string{"dryRun=All"}}
}

// createRow creates the ConfigMap: its server-side applies (the create-only
// first step and the second) meet the answer.
var createRow = answerOp{
	name:     "create",
	resource: "k8sconnect_object.cm",
	request:  func(e *answerEnv) faultproxy.Match { return faultproxy.ApplyOf("configmaps", e.name) },
	setup:    func(e *answerEnv) { e.objectConfig("hello", "") },
	reset:    func(e *answerEnv, _, after snapshot) { e.uncreate(after) },
	run: func(e *answerEnv, step int) acctest.Result {
		e.objectConfig(greetingFor(step), "")
		return e.w.Apply()
	},
	check: func(e *answerEnv, ok bool, _, after snapshot, step int) []string {
		if ok {
			if !after.exists || after.uid != after.stateUID || after.greeting != greetingFor(step) || after.stateG != greetingFor(step) {
				return []string{fmt.Sprintf("the create did not land in cluster and state: %v", after)}
			}
			return nil
		}
		// A failed create leaves nothing behind that state does not know:
		// no object, or the one state records.
		if after.exists != (len(after.state) != 0) || (after.exists && after.uid != after.stateUID) {
			return []string{fmt.Sprintf("a failed create left cluster and state apart: %v", after)}
		}
		return nil
	},
}

// uncreate brings the create's column back to where it starts: nothing in
// state or in the cluster.
func (e *answerEnv) uncreate(after snapshot) {
	e.t.Helper()
	if len(after.state) != 0 {
		if r := e.w.Destroy(); r.Err != nil {
			e.t.Fatalf("%s destroy: %v\n%s", acctest.Engine(), r.Err, r.Output)
		}
	}
	err := acctest.Dynamic(e.t).Resource(configMaps).Namespace(e.ns).Delete(context.Background(), e.name, metav1.DeleteOptions{})
	if err != nil && !strings.Contains(err.Error(), "not found") {
		e.t.Fatalf("deleting %s: %v", e.name, err)
	}
}

// planCreateRow plans the ConfigMap's create: its dry run meets the answer.
var planCreateRow = answerOp{
	name:     "plan (create)",
	resource: "k8sconnect_object.cm",
	request:  dryRunOf,
	setup:    func(e *answerEnv) { e.objectConfig("hello", "") },
	run: func(e *answerEnv, step int) acctest.Result {
		e.objectConfig(greetingFor(step), "")
		return e.w.Plan()
	},
	check: func(_ *answerEnv, _ bool, before, after snapshot, _ int) []string {
		return keptOnFailure(before, after)
	},
}

// setKind is how a set's row operates: plan an update, apply it, destroy.
func setKind(name string) string {
	switch {
	case strings.HasSuffix(name, "plan"):
		return "plan"
	case strings.HasSuffix(name, "destroy"):
		return "destroy"
	}
	return "apply"
}

// setRowOf is one operation of a resource that holds the ConfigMap among its
// objects; config writes it with a greeting.
func setRowOf(name, address string, config func(e *answerEnv, greeting string)) answerOp {
	op := answerOp{
		name:     name,
		resource: address,
		setup:    func(e *answerEnv) { config(e, "hello"); e.mustApply() },
	}
	switch setKind(name) {
	case "plan":
		op.request = dryRunOf
		op.run = func(e *answerEnv, step int) acctest.Result { config(e, greetingFor(step)); return e.w.Plan() }
		op.check = func(_ *answerEnv, _ bool, before, after snapshot, _ int) []string {
			return keptOnFailure(before, after)
		}
	case "apply":
		op.request = func(e *answerEnv) faultproxy.Match { return faultproxy.ApplyOf("configmaps", e.name) }
		op.run = func(e *answerEnv, step int) acctest.Result { config(e, greetingFor(step)); return e.w.Apply() }
		op.check = func(_ *answerEnv, ok bool, before, after snapshot, step int) []string {
			if !ok {
				return keptOnFailure(before, after)
			}
			if after.uid != before.uid || after.greeting != greetingFor(step) || after.stateG != greetingFor(step) {
				return []string{fmt.Sprintf("the update did not land in cluster and state once: before %v, after %v", before, after)}
			}
			return nil
		}
	default:
		op.request = func(e *answerEnv) faultproxy.Match { return faultproxy.DeleteOf("configmaps", e.name) }
		op.run = func(e *answerEnv, _ int) acctest.Result { return e.w.Destroy() }
		op.check = checkDestroyed
		op.reset = resetDestroyed
	}
	return op
}

// releaseRow is an operation of a k8sconnect_helm_release whose chart makes
// the ConfigMap.
func releaseRow(name string) answerOp {
	return setRowOf(name, "k8sconnect_helm_release.app", (*answerEnv).releaseConfig)
}

// setRow is an operation of a k8sconnect_manifest_set that holds the
// ConfigMap.
func setRow(name string) answerOp {
	return setRowOf(name, "k8sconnect_manifest_set.set", (*answerEnv).setConfig)
}

// releaseConfig installs a one-ConfigMap chart as the release e.name (the
// ConfigMap's name too), through the proxy's provider block.
func (e *answerEnv) releaseConfig(greeting string) {
	if e.chart == "" {
		e.chart = e.t.TempDir()
		files := map[string]string{
			"Chart.yaml": "apiVersion: v2\nname: answer\nversion: 0.1.0\n",
			"templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n" +
				"data:\n  greeting: {{ .Values.greeting | quote }}\n",
		}
		for name, text := range files {
			path := filepath.Join(e.chart, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				e.t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				e.t.Fatal(err)
			}
		}
	}
	e.w.Write(e.providerBlock() + fmt.Sprintf(`
resource "k8sconnect_helm_release" "app" {
  name      = %q
  namespace = %q
  chart     = %q
  timeout   = "60s"
  set       = [{ name = "greeting", value = %q }]
}
`, e.name, e.ns, e.chart, greeting))
}

// setConfig holds the ConfigMap in a manifest set, through the proxy's
// provider block.
func (e *answerEnv) setConfig(greeting string) {
	e.w.Write(e.providerBlock() + fmt.Sprintf(`
resource "k8sconnect_manifest_set" "set" {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: %s
      namespace: %s
    data:
      greeting: %s
  YAML
}
`, e.name, e.ns, greeting))
}
