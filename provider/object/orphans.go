package object

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

// An apply killed after some creates finished leaves objects that no state
// holds: Terraform saves a remote backend's state every 20 s or so during an
// apply, so the creates of the last interval are lost with the process. Each
// such object carries the id of a resource that no longer exists anywhere,
// and a create of the same declaration is refused like any object of another
// resource. The provider cannot tell this apart from a second state declaring
// the same object: neither Terraform nor Pulumi tells it which state it
// plans. So every create names the run that made the object, the refusal
// names that run, and the user, who knows which apply was killed, lets one
// apply take over every object that run left with a single setting, instead
// of an import per object (docs/adr/0001-crash-safe-create.md).

// annotationCreatedByRun names the provider run that created an object. It is
// dropped by the object's first update, which only an object in a state gets.
const annotationCreatedByRun = "k8sconnect.io/created-by-run"

var runPath = objectpath.Path{objectpath.Field("metadata"), objectpath.Field("annotations"), objectpath.Field(annotationCreatedByRun)}

// AdoptRunEnv lists (comma-separated) the runs whose leftover objects a create
// may take over.
const AdoptRunEnv = "K8SCONNECT_ADOPT_RUN"

// thisRun names this provider process: when it started, for the user to
// recognise it, and random bits, so that two runs started in the same second
// differ.
var thisRun = func() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
}()

// setCreatedByRun marks obj as created by this run.
func setCreatedByRun(obj *unstructured.Unstructured) {
	setAnnotation(obj, annotationCreatedByRun, thisRun)
}

// adoptable reports a finished object of another resource that the user let
// this apply take over: its run is listed in K8SCONNECT_ADOPT_RUN.
func adoptable(live *unstructured.Unstructured) bool {
	run := live.GetAnnotations()[annotationCreatedByRun]
	if run == "" || createPending(live) || live.GetAnnotations()[annotationOwnedBy] == "" {
		return false
	}
	return slices.Contains(adoptRuns(), run)
}

func adoptRuns() []string {
	var runs []string
	for _, r := range strings.Split(os.Getenv(AdoptRunEnv), ",") {
		if r = strings.TrimSpace(r); r != "" {
			runs = append(runs, r)
		}
	}
	return runs
}

// leftByRun explains, for a finished object of another resource that names
// the run that made it, how to take it over if that run was a killed apply of
// this configuration; "" when the object names no run.
func leftByRun(live *unstructured.Unstructured) string {
	run := live.GetAnnotations()[annotationCreatedByRun]
	if run == "" {
		return ""
	}
	when := ""
	if at := markedAt(live); !at.IsZero() {
		when = " at " + at.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("It was created%s by the run %s, and this state does not hold it. If that run was an apply of "+
		"this configuration that was killed or could not save its state (a remote backend saves it about every "+
		"20 s during an apply), let this apply take over, in place, every object that run left:\n\n"+
		"  %s=%s terraform apply   (or tofu apply, pulumi up)\n\n"+
		"If another configuration or state declares %s, remove one of the two declarations instead.",
		when, run, AdoptRunEnv, run, manifest.IdentityOf(live))
}
