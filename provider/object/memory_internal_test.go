package object

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/handon"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
)

func configMap(ns, name, rv string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns, "resourceVersion": rv},
	}}
}

// What a plan hands on is used once, only while fresh, answers only the body
// it was asked for, and is gone after a write to its object.
func TestMemory_handsOnOnceFreshAndUntilAWrite(t *testing.T) {
	c := &connection.Client{} // a client of its own: memories are per client
	live, dry := configMap("ns", "a", "7"), configMap("ns", "a", "8")
	id := manifest.IdentityOf(live)

	remember(c, live, time.Now(), []byte(`{"sent":1}`), dry)
	r, ok := recall(c, id)
	if !ok || r.Obj.GetResourceVersion() != "7" {
		t.Fatalf("recall right after remember: %v, %v", r.Obj, ok)
	}
	if _, ok := r.Answer([]byte(`{"sent":2}`)); ok {
		t.Error("a dry run's answer was given for another body")
	}
	if got, ok := r.Answer([]byte(`{"sent":1}`)); !ok || got.GetResourceVersion() != "8" {
		t.Errorf("the dry run's answer for the same body: %v, %v", got, ok)
	}
	if _, ok := recall(c, id); ok {
		t.Error("a copy was recalled twice")
	}

	remember(c, live, time.Now().Add(-handon.TTL-time.Second), nil, nil)
	if _, ok := recall(c, id); ok {
		t.Error("a copy read longer ago than handon.TTL was recalled")
	}

	// A write drops the copy under any version of the kind, and in any
	// namespace when the write names none; other objects keep theirs.
	other := configMap("ns", "b", "3")
	elsewhere := configMap("other", "a", "4")
	for _, w := range []manifest.Identity{
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "a"},
		{APIVersion: "v2", Kind: "ConfigMap", Namespace: "ns", Name: "a"},
		{APIVersion: "v1", Kind: "ConfigMap", Name: "a"},
	} {
		for _, obj := range []*unstructured.Unstructured{live, other, elsewhere} {
			remember(c, obj, time.Now(), nil, nil)
		}
		forget(c, w)
		if _, ok := recall(c, id); ok {
			t.Errorf("after a write to %v the object was still recalled", w)
		}
		if _, ok := recall(c, manifest.IdentityOf(other)); !ok {
			t.Errorf("a write to %v dropped another object's copy", w)
		}
		if _, ok := recall(c, manifest.IdentityOf(elsewhere)); ok == (w.Namespace == "") {
			t.Errorf("a write to %v: the same name in another namespace recalled = %v", w, ok)
		}
	}
}
