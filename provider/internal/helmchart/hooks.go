package helmchart

import (
	"fmt"
	"strconv"
	"strings"

	release "helm.sh/helm/v4/pkg/release/v1"
	"sigs.k8s.io/yaml"
)

// Role is what a rendered document is to Helm.
type Role int

const (
	// Object is installed and upgraded with the release.
	Object Role = iota
	// Hook runs at some of the release's lifecycle events.
	Hook
	// TestHook runs only under `helm test`, never at install or upgrade.
	TestHook
	// Skipped is a hook whose events Helm does not know; Helm leaves it out
	// of the release, and so do we.
	Skipped
)

// lifecycle are the hook events of installs, upgrades, rollbacks and deletes.
var lifecycle = map[string]bool{}

func init() {
	for _, e := range []release.HookEvent{
		release.HookPreInstall, release.HookPostInstall, release.HookPreDelete, release.HookPostDelete,
		release.HookPreUpgrade, release.HookPostUpgrade, release.HookPreRollback, release.HookPostRollback,
	} {
		lifecycle[e.String()] = true
	}
}

// RoleOf reads a document's helm.sh/hook annotation as Helm's manifest
// sorter reads it: a comma-separated list of events, case and spaces
// ignored; one unknown event makes Helm skip the whole document.
func RoleOf(text string) (Role, error) {
	var head struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal([]byte(text), &head); err != nil {
		return Object, fmt.Errorf("reading its metadata: %w", err)
	}
	events, ok := head.Metadata.Annotations[release.HookAnnotation]
	if !ok {
		return Object, nil
	}
	role := TestHook
	for _, e := range hookEvents(events) {
		switch {
		case lifecycle[e]:
			role = Hook
		case e == release.HookTest.String(), e == "test-success": // Helm 2's name, still read
		default:
			return Skipped, nil
		}
	}
	return role, nil
}

// hookEvents splits a helm.sh/hook annotation as Helm's manifest sorter
// does: comma-separated, case and spaces ignored. An empty element is kept,
// as an event Helm does not know.
func hookEvents(annotation string) []string {
	var out []string
	for e := range strings.SplitSeq(annotation, ",") {
		out = append(out, strings.ToLower(strings.TrimSpace(e)))
	}
	return out
}

// HookSpec is how a hook runs, as its annotations say.
type HookSpec struct {
	// Events are the lifecycle events it runs at (helm.sh/hook).
	Events []release.HookEvent
	// Weight orders the hooks of one event (helm.sh/hook-weight).
	Weight int
	// DeletePolicies say when it is deleted (helm.sh/hook-delete-policy).
	DeletePolicies []release.HookDeletePolicy
}

// HookOf reads the annotations of a document RoleOf calls a Hook, as Helm's
// manifest sorter reads them. A weight is the annotation's text as a whole
// number, spaces not trimmed; anything else (" 5", "1.5", "first") is weight
// 0, as Helm runs it. Delete policies are the comma-separated elements, each
// trimmed and lowercased, empty ones kept: an annotation present but empty
// names a policy that matches nothing, and so, as with Helm, not the default.
func HookOf(annotations map[string]string) HookSpec {
	var h HookSpec
	for _, e := range hookEvents(annotations[release.HookAnnotation]) {
		if e != "" {
			h.Events = append(h.Events, release.HookEvent(e))
		}
	}
	if n, err := strconv.Atoi(annotations[release.HookWeightAnnotation]); err == nil {
		h.Weight = n
	}
	if policies, ok := annotations[release.HookDeleteAnnotation]; ok {
		for d := range strings.SplitSeq(policies, ",") {
			h.DeletePolicies = append(h.DeletePolicies, release.HookDeletePolicy(strings.ToLower(strings.TrimSpace(d))))
		}
	}
	if len(h.DeletePolicies) == 0 {
		// Helm's default since Helm 3: a hook is replaced, not left to
		// collide with its previous run.
		h.DeletePolicies = []release.HookDeletePolicy{release.HookBeforeHookCreation}
	}
	return h
}
