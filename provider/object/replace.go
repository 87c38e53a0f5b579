package object

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/managedfields"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

// lostOnReplace says, per kind, what deleting and re-creating an object loses
// beyond the object itself.
var lostOnReplace = map[string]string{
	"PersistentVolumeClaim": "The claim is deleted and a new one provisions a new, empty volume: the data on the " +
		"volume is lost unless the bound PersistentVolume's persistentVolumeReclaimPolicy is Retain.",
	"PersistentVolume": "With persistentVolumeReclaimPolicy Delete, the storage behind the volume is deleted with it.",
	"StatefulSet": "Every Pod is deleted and re-created, an outage until they are Ready again. PersistentVolumeClaims " +
		"made from volumeClaimTemplates stay and are reused by name.",
	"Job":                      "Its Pods, their logs and its completion history are deleted, and the Job runs again.",
	"Namespace":                "Every object inside the namespace is deleted with it.",
	"Service":                  "Its cluster IP changes, and a LoadBalancer gets a new external address.",
	"Deployment":               "Every Pod is deleted and re-created at once, an outage until they are Ready again.",
	"DaemonSet":                "Every Pod is deleted and re-created at once, an outage on each node until they are Ready again.",
	"ReplicaSet":               "Every Pod is deleted and re-created at once.",
	"CustomResourceDefinition": "Every custom resource of that kind, in every namespace, is deleted with it.",
}

// replacementWarning explains a planned replacement: why, what is lost, and
// how to keep it.
func replacementWarning(prev, next manifest.Identity, why string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "k8sconnect will delete %s and create %s, because %s.\n", prev, next, why)
	if lost, ok := lostOnReplace[prev.Kind]; ok {
		b.WriteString("What is lost: " + lost + "\n")
	} else {
		b.WriteString("What is lost: the object's UID, its status, and whatever controllers attached to it " +
			"(owner references, Events).\n")
	}
	b.WriteString("To keep it: revert the change; or set delete_protection = true and apply that first, which " +
		"makes the replacement fail instead of deleting anything; or create the new object under another name " +
		"beside the old one and move over.")
	if prev.Kind == "PersistentVolumeClaim" {
		b.WriteString(" For the volume's data: set the bound PersistentVolume's persistentVolumeReclaimPolicy to " +
			"Retain before applying, and bind the new claim to it by volumeName.")
	}
	return b.String()
}

// warnHandOver tells the user, at plan time, which fields a new ignore_fields
// entry hands over and with which value they stay in the cluster (a sensitive
// value as red renders it: a keyed hash).
func warnHandOver(live *unstructured.Unstructured, paths []objectpath.Path, red sensitive.Redactor, diags *diag.Diagnostics) {
	if len(paths) == 0 {
		return
	}
	fields, err := managedfields.Of(live)
	if err != nil {
		return
	}
	var leaves []projection.Leaf
	for _, l := range projection.Leaves(fields.Manager(ssa.FieldManager), ownAnnotations...) {
		if l.Path.UnderAny(paths) {
			leaves = append(leaves, l)
		}
	}
	if len(leaves) == 0 {
		return
	}
	values := projection.Of(live.Object, leaves, red)
	var b strings.Builder
	fmt.Fprintf(&b, "ignore_fields now lists fields k8sconnect manages on %s. They are handed over, not reset: "+
		"k8sconnect stops managing them and they keep their current values in the cluster, owned by no one until "+
		"another manager (an autoscaler, an operator, kubectl) writes them:", manifest.IdentityOf(live))
	for _, l := range leaves {
		name := red.Name(live.Object, l.Path)
		fmt.Fprintf(&b, "\n  %s = %s", name, values[name])
	}
	diags.AddWarning("Fields handed over", b.String())
}

// keepHandedOver puts the live values of the fields that newly ignored paths
// hand over back into desired, for the plan's dry run only. The apply releases
// them first (handOver), so they keep those values; a dry run of desired
// without them would instead see them removed, and fail for a required field
// such as a container's image.
func keepHandedOver(desired, live *unstructured.Unstructured, paths []objectpath.Path) {
	if len(paths) == 0 {
		return
	}
	fields, err := managedfields.Of(live)
	if err != nil {
		return
	}
	for _, l := range projection.Leaves(fields.Manager(ssa.FieldManager), ownAnnotations...) {
		if !l.Path.UnderAny(paths) {
			continue
		}
		if v, ok := l.Path.Get(live.Object); ok {
			l.Path.Set(desired.Object, v)
		}
	}
}
