package wait

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/waiting"
)

func TestProgressLine(t *testing.T) {
	st := waiting.State{Summary: "2/3 replicas ready"}
	if got := progressLine("web", st, 70*time.Second+300*time.Millisecond); got != "web: 2/3 replicas ready (1m10s elapsed)" {
		t.Errorf("got %q", got)
	}
	if got := progressLine("web", st, 2345*time.Millisecond); got != "web: 2/3 replicas ready (2.3s elapsed)" {
		t.Errorf("got %q", got)
	}
}

func TestFailureSaysWhatToDoNext(t *testing.T) {
	id := manifest.Identity{APIVersion: "batch/v1", Kind: "Job", Namespace: "ns", Name: "migrate"}
	spec := waiting.Spec{Condition: "Complete"}
	job := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "migrate"},
		"status": map[string]any{"active": int64(1)},
	}}
	res := waiting.Result{Object: job, State: spec.Evaluate(job)}
	pod := unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "migrate-abc"},
		"status": map[string]any{"phase": "Pending"},
	}}
	summary, detail := failure(id, spec, 5*time.Second, &waiting.TimeoutError{Timeout: 5 * time.Second, Last: res}, res,
		[]unstructured.Unstructured{pod}, nil)
	if summary != "Timed out waiting for Job ns/migrate" {
		t.Errorf("summary %q", summary)
	}
	for _, want := range []string{
		"Waited 5s for condition Complete on Job ns/migrate.",
		"Now: condition Complete is not reported yet.",
		"Pods: 1 active",
		"migrate-abc: Pending; not scheduled yet",
		"it will not be replaced",
		"Run terraform apply, tofu apply or pulumi up again",
	} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail lacks %q:\n%s", want, detail)
		}
	}

	summary, detail = failure(id, spec, time.Minute, &waiting.StuckError{Last: res}, res, nil, nil)
	if summary != "Job ns/migrate cannot reach condition Complete" || !strings.Contains(detail, "before the timeout") {
		t.Errorf("stuck: %q\n%s", summary, detail)
	}
}
