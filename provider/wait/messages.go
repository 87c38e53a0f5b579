package wait

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/waiting"
)

// failure words a failed wait; the last paragraph is for the user who wonders
// whether the timeout broke anything.
func failure(id manifest.Identity, spec waiting.Spec, timeout time.Duration, err error, res waiting.Result, pods []unstructured.Unstructured, podErr error) (string, string) {
	var summary, head string
	var stuck *waiting.StuckError
	var timedOut *waiting.TimeoutError
	switch {
	case errors.As(err, &stuck):
		summary = fmt.Sprintf("%s cannot reach %s", id, spec.Describe())
		head = fmt.Sprintf("Stopped waiting for %s on %s before the timeout: it can no longer succeed without a change to the object.", spec.Describe(), id)
	case errors.As(err, &timedOut) && timedOut.Operation != nil:
		summary = fmt.Sprintf("Timed out waiting for %s (%s)", id, timedOut.Operation.Setting)
		head = strings.ToUpper(timedOut.Operation.Error()[:1]) + timedOut.Operation.While(fmt.Sprintf(
			"waiting for %s on %s", spec.Describe(), id))[1:] + fmt.Sprintf(", before wait_for.timeout (%s) did.", timeout)
		if timedOut.ReadErr != nil {
			head += fmt.Sprintf(" The last read failed: %v.", timedOut.ReadErr)
		}
	case errors.As(err, &timedOut):
		summary = fmt.Sprintf("Timed out waiting for %s", id)
		head = fmt.Sprintf("Waited %s for %s on %s.", timeout, spec.Describe(), id)
		if timedOut.ReadErr != nil {
			head += fmt.Sprintf(" The last read failed: %v.", timedOut.ReadErr)
			if remedy := connection.Remedy(timedOut.ReadErr); remedy != "" {
				head += " " + remedy
			}
		}
	default:
		return fmt.Sprintf("Wait for %s failed", id), err.Error()
	}
	var b strings.Builder
	b.WriteString(head + "\n\n")
	b.WriteString(waiting.Explain(spec, res, pods))
	if podErr != nil {
		fmt.Fprintf(&b, "(Could not list its pods: %v)\n", podErr)
	}
	b.WriteString("\nThe object was not changed, and it will not be replaced: only this wait failed. " +
		"Run terraform apply, tofu apply or pulumi up again to wait again on the same object; resources that depend on this wait are created once it succeeds.")
	return summary, b.String()
}

// progressLine is what the provider log shows while waiting: "web: 2/3 replicas ready (1m10s elapsed)".
func progressLine(name string, st waiting.State, elapsed time.Duration) string {
	return fmt.Sprintf("%s: %s (%s elapsed)", name, st.Summary, roundElapsed(elapsed))
}

func roundElapsed(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}
