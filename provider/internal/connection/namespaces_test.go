package connection

import (
	"errors"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Only the server's answer that the namespace itself is missing marks it:
// an object of that name missing, another namespace missing, or a failure
// that says nothing of the namespace leave it as it was.
func TestNamespaceMissingIsLearnedOnlyFromItsOwnNotFound(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"the namespace is missing", NamespaceNotFound("team"), true},
		{"wrapped, as a caller returns it", fmt.Errorf("dry run: %w", NamespaceNotFound("team")), true},
		{"an object named like the namespace is missing", apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "team"), false},
		{"another namespace is missing", NamespaceNotFound("other"), false},
		{"a namespace of another group", apierrors.NewNotFound(schema.GroupResource{Group: "example.com", Resource: "namespaces"}, "team"), false},
		{"refused", apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "team", errors.New("no")), false},
		{"no answer", errors.New("connection reset by peer"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Client{}
			c.NoteNamespace("team", tc.err)
			if got := c.NamespaceMissing("team"); got != tc.want {
				t.Errorf("after %v: NamespaceMissing = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// Any answer that shows the namespace exists ends what a NotFound taught, and
// so does time: a namespace made since by someone else is dry-run again.
func TestNamespaceMissingIsForgotten(t *testing.T) {
	c := &Client{}
	c.NoteNamespace("team", NamespaceNotFound("team"))
	c.NoteNamespace("", NamespaceNotFound("")) // a cluster-scoped object's request: nothing to note
	if !c.NamespaceMissing("team") || c.NamespaceMissing("") {
		t.Fatal("a NotFound of namespace team was not noted, or one of no namespace was")
	}
	c.NoteNamespace("team", apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "x", errors.New("taken")))
	if !c.NamespaceMissing("team") {
		t.Error("a conflict, which says nothing of the namespace, ended what the NotFound taught")
	}
	c.NoteNamespace("team", nil)
	if c.NamespaceMissing("team") {
		t.Error("a request that went through in namespace team did not end what the NotFound taught")
	}

	c.NoteNamespace("team", NamespaceNotFound("team"))
	c.missing.at["team"] = time.Now().Add(-missingNamespaceMemory - time.Second)
	if c.NamespaceMissing("team") {
		t.Errorf("a NotFound older than %s still marks the namespace missing", missingNamespaceMemory)
	}
}
