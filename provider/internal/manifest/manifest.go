// Package manifest parses the YAML a user writes into a Kubernetes object and
// rejects what the API server would reject or silently rewrite, so the error shows
// at plan time instead of half-way through an apply.
package manifest

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/provider/internal/kubejson"
	"github.com/k8sconnect/k8sconnect/provider/internal/yamldocs"
)

// Identity names one object. Namespace is empty for cluster-scoped kinds and for
// namespaced objects whose YAML leaves it out (the API default then applies).
type Identity struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
}

// GVK is the identity's group, version and kind.
func (id Identity) GVK() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(id.APIVersion, id.Kind)
}

func (id Identity) String() string {
	if id.Namespace == "" {
		return fmt.Sprintf("%s %s", id.Kind, id.Name)
	}
	return fmt.Sprintf("%s %s/%s", id.Kind, id.Namespace, id.Name)
}

// IdentityOf reads the identity of a parsed object.
func IdentityOf(obj *unstructured.Unstructured) Identity {
	return Identity{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// serverOwnedMetadata are fields the API server sets; applying them either fails
// or fights the server on every plan.
var serverOwnedMetadata = []string{
	"uid", "resourceVersion", "generation", "creationTimestamp",
	"deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "selfLink",
}

// Parse reads exactly one object from yaml_body.
func Parse(body string) (*unstructured.Unstructured, error) {
	var docs [][]byte
	for _, d := range yamldocs.SplitDocuments("yaml_body", []byte(body)) {
		if yamldocs.HasContent(d.Text) {
			docs = append(docs, []byte(d.Text))
		}
	}
	switch len(docs) {
	case 0:
		return nil, errors.New("yaml_body is empty: it must hold exactly one Kubernetes object")
	case 1:
	default:
		return nil, fmt.Errorf("yaml_body holds %d documents; k8sconnect_object manages exactly one object. Split them with the k8sconnect_yaml_split data source and for_each", len(docs))
	}

	var doc any
	// kubejson decodes as kubectl does (numbers keep every digit kubectl keeps),
	// and a key given twice is an error, not the last one silently winning.
	if err := kubejson.Unmarshal(docs[0], &doc); err != nil {
		return nil, fmt.Errorf("yaml_body is not valid YAML: %w", err)
	}
	content, ok := doc.(map[string]any)
	if !ok || content == nil {
		// Valid YAML of the wrong shape: "not valid YAML" would send the user
		// looking for a syntax error that is not there.
		return nil, fmt.Errorf("yaml_body must be a YAML mapping (an object with apiVersion, kind and metadata), not %s", shape(doc))
	}
	obj := &unstructured.Unstructured{Object: content}

	var missing []string
	if obj.GetAPIVersion() == "" {
		missing = append(missing, "apiVersion")
	}
	if obj.GetKind() == "" {
		missing = append(missing, "kind")
	}
	if obj.GetName() == "" {
		if obj.GetGenerateName() != "" {
			return nil, errors.New("yaml_body uses metadata.generateName; k8sconnect needs a fixed metadata.name to find the object again")
		}
		missing = append(missing, "metadata.name")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("yaml_body is missing %s", strings.Join(missing, ", "))
	}
	if _, ok := content["status"]; ok {
		return nil, errors.New("yaml_body sets status, which the cluster's controllers own; remove it (to wait for a status value, use k8sconnect_wait)")
	}
	if meta, ok := content["metadata"].(map[string]any); ok {
		for _, f := range serverOwnedMetadata {
			if _, set := meta[f]; set {
				return nil, fmt.Errorf("yaml_body sets metadata.%s, which the API server owns; remove it (it is often left over from `kubectl get -o yaml`)", f)
			}
		}
	}
	return obj, nil
}

// shape names what a YAML document holds instead of a mapping.
func shape(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "a list (one object per yaml_body; split a list with the k8sconnect_yaml_split data source)"
	case string:
		return "a string"
	default:
		return fmt.Sprintf("a single value (%v)", v)
	}
}
