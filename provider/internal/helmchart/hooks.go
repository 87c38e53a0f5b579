package helmchart

import (
	"fmt"
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
	for e := range strings.SplitSeq(events, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
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
