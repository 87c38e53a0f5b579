package manifestset

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	relutil "helm.sh/helm/v4/pkg/release/v1/util"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectset"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
	"github.com/k8sconnect/k8sconnect/provider/internal/yamldocs"
)

// member is one object of the set, ready to apply.
type member struct {
	key string
	obj *unstructured.Unstructured
	// red renders its sensitive values (Secret data) as state keeps them,
	// with the key of the set's parent (redact), which the members name.
	red sensitive.Redactor
	// body is the hash of the body sent (objectset.BodyHash), set with red.
	body string
	// ignored are the fields ignore_fields leaves to other managers: not
	// applied, not projected.
	ignored []objectpath.Path
	crd     bool
}

// members are the set's objects in the order they are applied: CRDs, then
// cluster-scoped objects, then namespaced ones, each kind by kind in Helm's
// install order.
type members struct {
	all []member
	// definedKinds are the kinds the set's CRDs define, "Kind.group": a
	// custom resource of one is known after apply until its CRD is served.
	definedKinds map[string]bool
	// namespaces are the Namespaces the set makes.
	namespaces map[string]bool
	// unmatchedIgnores are the ignore_fields keys no object matched.
	unmatchedIgnores []string
}

func (ms *members) keys() map[string]bool {
	out := make(map[string]bool, len(ms.all))
	for _, m := range ms.all {
		out[m.key] = true
	}
	return out
}

// withWriteOnly is m (read from a plan, where the engine leaves
// yaml_body_wo null) with the write-only body of the configuration, to read
// the source from. It must not be written back to a plan or state: the
// engine refuses a write-only value there.
func withWriteOnly(ctx context.Context, m model, config tfsdk.Config, diags *diag.Diagnostics) model {
	diags.Append(config.GetAttribute(ctx, pathYAMLBodyWO, &m.YAMLBodyWO)...)
	return m
}

// documents reads the set's source, which must be known.
func (m *model) documents(ctx context.Context) ([]yamldocs.Document, error) {
	switch {
	case !m.YAMLBody.IsNull():
		return yamldocs.FromContent(m.YAMLBody.ValueString()), nil
	case !m.YAMLBodyWO.IsNull():
		return yamldocs.FromContent(m.YAMLBodyWO.ValueString()), nil
	case !m.Kustomization.IsNull():
		k, diags := yamldocs.KustomizeFrom(ctx, m.KustomizeOptions)
		if diags.HasError() {
			return nil, fmt.Errorf("kustomize_options: %s", diags.Errors()[0].Detail())
		}
		return yamldocs.FromKustomize(m.Kustomization.ValueString(), k)
	default:
		return filesOf(m.Path.ValueString(), m.Recursive.ValueBool())
	}
}

// sourceKnown reports whether the source is known at plan.
func (m *model) sourceKnown() bool {
	return !m.YAMLBody.IsUnknown() && !m.YAMLBodyWO.IsUnknown() && !m.Path.IsUnknown() && !m.Kustomization.IsUnknown() && !m.Recursive.IsUnknown() &&
		yamldocs.KustomizeOptionsKnown(m.KustomizeOptions) &&
		!m.Namespace.IsUnknown() && !m.IgnoreFields.IsUnknown()
}

// manifestExtensions are the files a directory's manifests are read from.
var manifestExtensions = []string{".yaml", ".yml", ".json"}

// filesOf reads the manifests of p: one file, the manifest files of a
// directory (and its subdirectories, recursive), or the files a glob matches.
func filesOf(p string, recursive bool) ([]yamldocs.Document, error) {
	info, err := os.Stat(p)
	if err != nil || !info.IsDir() {
		return yamldocs.FromPattern(p) // a file is a glob that matches itself
	}
	var files []string
	err = filepath.WalkDir(p, func(f string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && f != p && !recursive:
			return filepath.SkipDir
		case !d.IsDir() && slices.Contains(manifestExtensions, strings.ToLower(filepath.Ext(f))):
			files = append(files, f)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("directory %q holds no .yaml, .yml or .json file%s", p,
			map[bool]string{false: " (set recursive = true to read its subdirectories)", true: ""}[recursive])
	}
	var docs []yamldocs.Document
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		docs = append(docs, yamldocs.SplitDocuments(f, data)...)
	}
	return docs, nil
}

// readMembers reads the source of m into the set's members; finder (the
// cluster, or nil) tells the scope of kinds no CRD of the set defines. The
// errors are in diags, on the source attribute.
func readMembers(ctx context.Context, m *model, finder yamldocs.ScopeFinder, diags *diag.Diagnostics) *members {
	at := pathYAMLBody
	switch {
	case !m.YAMLBodyWO.IsNull():
		at = pathYAMLBodyWO
	case !m.Path.IsNull():
		at = pathPath
	case !m.Kustomization.IsNull():
		at = pathKustomize
	}
	docs, err := m.documents(ctx)
	if err != nil {
		diags.AddAttributeError(at, "Could not read the manifests", err.Error())
		return nil
	}
	manifests, err := yamldocs.Split(docs)
	if err == nil && len(manifests) == 0 {
		err = fmt.Errorf("the source holds no object: a set of nothing would delete every object it holds")
	}
	if err != nil {
		yamldocs.AddErrors(diags, at, "Invalid manifests", err)
		return nil
	}
	scoped, err := yamldocs.ClassifyInNamespace(manifests, finder, namespaceOf(m))
	if err != nil {
		yamldocs.AddErrors(diags, at, "Invalid manifests", err)
		return nil
	}
	rules, ok := objectset.IgnoreRulesOf(ctx, m.IgnoreFields, pathIgnoreFields, diags)
	if !ok {
		return nil
	}
	out := &members{definedKinds: map[string]bool{}, namespaces: map[string]bool{}}
	for _, m := range manifests {
		if m.CRD != nil {
			out.definedKinds[m.CRD.Kind+"."+m.CRD.Group] = true
		}
	}
	var keys []string
	for _, group := range []map[string]string{scoped.CRDs, scoped.ClusterScoped, scoped.Namespaced} {
		var run []member
		for _, key := range slices.Sorted(maps.Keys(group)) {
			var obj unstructured.Unstructured
			if err := json.Unmarshal([]byte(group[key]), &obj.Object); err != nil {
				diags.AddAttributeError(at, "Invalid manifests", fmt.Sprintf("%s: %v", key, err))
				return nil
			}
			mb := member{key: key, obj: &obj, ignored: rules.FieldsOf(key)}
			for _, f := range mb.ignored {
				f.RemoveEvery(obj.Object)
			}
			if obj.GetKind() == "Namespace" && obj.GroupVersionKind().Group == "" {
				out.namespaces[obj.GetName()] = true
			}
			run = append(run, mb)
			keys = append(keys, key)
		}
		slices.SortStableFunc(run, func(a, b member) int {
			return objectset.CompareKinds(relutil.InstallOrder, a.obj.GetKind(), b.obj.GetKind())
		})
		out.all = append(out.all, run...)
	}
	for i := range out.all {
		out.all[i].crd = out.all[i].obj.GetKind() == "CustomResourceDefinition" &&
			out.all[i].obj.GroupVersionKind().Group == "apiextensions.k8s.io"
	}
	out.unmatchedIgnores = rules.Unmatched(keys)
	return out
}

// namespaceOf is the namespace of the set's objects that set none.
func namespaceOf(m *model) string {
	if ns := m.Namespace.ValueString(); ns != "" {
		return ns
	}
	return "default"
}

// defaultParentName is the name of the parent of a set that names none: a
// hash of its members' keys when it is created, so that it is known at plan
// and the same at apply; it is kept in state (id) from then on.
func defaultParentName(ms *members) string {
	keys := slices.Sorted(maps.Keys(ms.keys()))
	sum := sha256.Sum256([]byte(strings.Join(keys, "\n")))
	return "k8sconnect-set-" + hex.EncodeToString(sum[:])[:10]
}
