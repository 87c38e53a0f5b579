package helmchart

import (
	"errors"
	"fmt"
	"maps"

	"github.com/k8sconnect/k8sconnect/provider/internal/yamldocs"
)

// Sorted is a rendered chart read into objects, as the data source hands them
// out and the release applies them.
type Sorted struct {
	// Objects are the release's objects by scope: CRDs (from crds/ and the
	// templates), cluster-scoped and namespaced, keyed and written as
	// k8sconnect_yaml_scoped keys and writes them (compact JSON).
	Objects yamldocs.Scoped
	// Hooks are the lifecycle hooks, keyed and written the same way. A key
	// may also be in Objects: a chart may declare one object as both.
	Hooks map[string]string
	// FromCRDsDir are the keys of the CRDs that come from crds/ directories,
	// which Helm installs before the release and never deletes: removing a
	// CRD removes every object of its kind in the cluster, whoever made it.
	FromCRDsDir map[string]bool
}

// Sort reads every rendered document with the reader of the other data
// sources (so bodies and keys are theirs, and an error names the template
// file, document and line), sorts the release's objects by scope and keeps
// lifecycle hooks apart. Objects whose template sets no namespace are put in
// namespace, as Helm puts them. `helm test` hooks and hooks of unknown events
// are left out, as `helm install` leaves them.
func Sort(r *Rendered, finder yamldocs.ScopeFinder, namespace string) (Sorted, error) {
	var objectDocs, hookDocs []yamldocs.Document
	var errs []error
	for _, f := range r.CRDs {
		objectDocs = append(objectDocs, yamldocs.SplitDocuments(f.Path, []byte(f.Text))...)
	}
	for _, f := range r.Files {
		for _, d := range yamldocs.SplitDocuments(f.Path, []byte(f.Text)) {
			if !yamldocs.HasContent(d.Text) {
				continue
			}
			role, err := RoleOf(d.Text)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", d.Where(), err))
				continue
			}
			switch role {
			case Object:
				objectDocs = append(objectDocs, d)
			case Hook:
				hookDocs = append(hookDocs, d)
			case TestHook, Skipped:
				// Not part of an install or an upgrade.
			}
		}
	}
	if len(errs) > 0 {
		return Sorted{}, errors.Join(errs...)
	}
	manifests, err := yamldocs.Split(objectDocs)
	if err != nil {
		return Sorted{}, err
	}
	crdFiles := map[string]bool{}
	for _, f := range r.CRDs {
		crdFiles[f.Path] = true
	}
	fromCRDsDir := map[string]bool{}
	for key, m := range manifests {
		if crdFiles[m.Source] {
			fromCRDsDir[key] = true
		}
	}
	objects, err := yamldocs.ClassifyInNamespace(manifests, finder, namespace)
	if err != nil {
		return Sorted{}, err
	}
	hooks, err := classify(hookDocs, finder, namespace)
	if err != nil {
		return Sorted{}, err
	}
	out := Sorted{Objects: objects, Hooks: map[string]string{}, FromCRDsDir: fromCRDsDir}
	for _, m := range []map[string]string{hooks.CRDs, hooks.ClusterScoped, hooks.Namespaced} {
		maps.Copy(out.Hooks, m)
	}
	return out, nil
}

func classify(docs []yamldocs.Document, finder yamldocs.ScopeFinder, namespace string) (yamldocs.Scoped, error) {
	manifests, err := yamldocs.Split(docs)
	if err != nil {
		return yamldocs.Scoped{}, err
	}
	return yamldocs.ClassifyInNamespace(manifests, finder, namespace)
}
