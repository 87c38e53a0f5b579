package merge

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdmerge "sigs.k8s.io/structured-merge-diff/v6/merge"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/k8sconnect/k8sconnect/provider/internal/managedfields"
)

// Merge returns live with patch applied the way the API server applies it: a
// forced Server-Side Apply by manager, computed with the server's own engine
// (structured-merge-diff) from t's schema. Lists and maps combine as their
// schema says: list-maps by all their keys (a key an element leaves out is its
// schema default, so a port without protocol is the TCP port), sets as the
// union of values, atomic lists and maps replaced whole, granular maps and
// objects key by key; elements are ordered as the server orders them. A field
// manager applied before (live's metadata.managedFields) and leaves out now is
// removed when no other manager owns it, as the server prunes it. Defaulted
// list-map keys are written into the patch's elements, as the server's
// defaulting does after the merge; other defaults, and the server's
// validation and admission, are not predicted.
//
// On top, patch may use what a strategic-merge patch means and Server-Side
// Apply does not have (see strategic): the directives $patch, $retainKeys,
// $deleteFromPrimitiveList and $setElementOrder, a null that deletes its
// field, and patch strategy retainKeys. The server refuses the directives in a
// Server-Side Apply, keeps a null as the field's zero value (a label "") and
// refuses a retainKeys union switch whose old member another manager owns.
//
// A field t does not know, or a value of the wrong shape or type for its
// field, is an error naming its path; so is a set value or list-map key the
// patch gives twice, which the server refuses too. Neither argument is
// modified. The result keeps live's metadata.managedFields as they were: the
// server rewrites them, and Merge does not predict how.
func Merge(live, patch map[string]any, t *Type, manager string) (map[string]any, error) {
	current, _ := copyJSON(live).(map[string]any) // a map copies to a map
	recorded := unstructured.Unstructured{Object: current}
	entries := recorded.GetManagedFields()
	recordedRaw, hadRecord, _ := unstructured.NestedFieldNoCopy(current, "metadata", "managedFields")
	// The server takes managedFields out of the object before merging: they
	// are the record of ownership, not fields anyone owns.
	unstructured.RemoveNestedField(current, "metadata", "managedFields")

	st := newStrategic(t, true)
	clean, keep, err := st.value(nil, patch, t.root, patchMeta{}, false)
	if err != nil {
		return nil, err
	}
	if !keep {
		return nil, fmt.Errorf("%s: the patch deletes the whole object ($patch: delete at its root)", t.gvk.Kind)
	}
	if patch["$patch"] == "replace" {
		// The root has no path in a field set: RemoveItems cannot take it out.
		current = map[string]any{}
	}
	// Live may repeat a key or set value (the server let it in before it
	// checked); the applied patch may not. Both as the server parses them.
	liveTyped, err := t.parser.FromUnstructured(current, typed.AllowDuplicates)
	if err != nil {
		return nil, fmt.Errorf("%s: the live object does not match the schema: %w", t.gvk.Kind, err)
	}
	liveTyped = liveTyped.RemoveItems(st.remove)
	patchTyped, err := t.parser.FromUnstructured(clean)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.gvk.Kind, err)
	}
	managers, err := managersOf(entries)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.gvk.Kind, err)
	}
	version := fieldpath.APIVersion(t.gvk.GroupVersion().String())
	updater := (&smdmerge.UpdaterBuilder{Converter: oneVersion{version}, ReturnInputOnNoop: true}).BuildUpdater()
	merged, _, err := updater.Apply(liveTyped, patchTyped, version, managers, applierID(manager), true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.gvk.Kind, err)
	}
	out, ok := merged.AsValue().Unstructured().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: the patch does not leave an object at its root", t.gvk.Kind)
	}
	if hadRecord {
		if md, ok := out["metadata"].(map[string]any); ok {
			md["managedFields"] = recordedRaw
		}
	}
	return out, nil
}

// managersOf reads live's managedFields into the form SMD's updater keeps
// ownership in: each entry's fields by a key that tells managers apart as the
// server's does (name, operation, subresource, and the version of an update).
func managersOf(entries []metav1.ManagedFieldsEntry) (fieldpath.ManagedFields, error) {
	managers := fieldpath.ManagedFields{}
	for _, e := range entries {
		if e.FieldsV1 == nil {
			continue
		}
		set, err := managedfields.ParseSet(e.FieldsV1.GetRawBytes())
		if err != nil {
			return nil, fmt.Errorf("the managedFields entry of %q cannot be read: %w", e.Manager, err)
		}
		applied := e.Operation == metav1.ManagedFieldsOperationApply
		id := managerID(e.Manager, e.Operation, e.Subresource, e.APIVersion)
		managers[id] = fieldpath.NewVersionedSet(set, fieldpath.APIVersion(e.APIVersion), applied)
	}
	return managers, nil
}

// applierID is the key of manager's own Server-Side Apply entry.
func applierID(manager string) string {
	return managerID(manager, metav1.ManagedFieldsOperationApply, "", "")
}

func managerID(manager string, op metav1.ManagedFieldsOperationType, subresource, apiVersion string) string {
	if op == metav1.ManagedFieldsOperationApply {
		apiVersion = "" // an applier is one manager whatever version it applied
	}
	return fmt.Sprintf("%q %q %q %q", manager, op, subresource, apiVersion)
}

// oneVersion converts nothing: Load reads the schema of one version only. The
// updater leaves alone the fields a manager recorded under another version (a
// custom resource's older one), as the server does for a version it no longer
// serves: it neither prunes them nor keeps them for that manager.
type oneVersion struct{ version fieldpath.APIVersion }

var errOtherVersion = errors.New("only the version whose schema was loaded can be compared")

func (c oneVersion) Convert(v *typed.TypedValue, to fieldpath.APIVersion) (*typed.TypedValue, error) {
	if to != c.version {
		return nil, errOtherVersion
	}
	return v, nil
}

func (oneVersion) IsMissingVersionError(err error) bool { return errors.Is(err, errOtherVersion) }

// copyJSON deep-copies maps and lists of an unstructured value.
func copyJSON(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = copyJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = copyJSON(e)
		}
		return out
	default:
		return v
	}
}
