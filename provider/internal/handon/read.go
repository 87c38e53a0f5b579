package handon

import (
	"bytes"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Read is what a refresh or a plan hands on of one object: the object as it
// read it, and the answer to the dry run it sent against that copy, if it
// sent one. k8sconnect_object and k8sconnect_helm_release hand these on by
// one rule: a call hands on only what it read or asked itself, so a read
// and its answer serve at most the call after (Pulumi's Diff, then the plan
// its Update makes), and a copy is never renewed by being handed on.
type Read struct {
	Obj  *unstructured.Unstructured // nil: not read (not there, or not asked for)
	Seen time.Time                  // when Obj was read
	// Sent identifies the body the dry run sent (the body, or a digest of
	// it), and Dry is the answer; nil without a dry run.
	Sent []byte
	Dry  *unstructured.Unstructured
}

// Answer is the dry run's answer to the body sent identifies, against this
// copy, if a plan got one: a copy of it, which the caller may change.
func (r Read) Answer(sent []byte) (*unstructured.Unstructured, bool) {
	if r.Dry == nil || len(sent) == 0 || !bytes.Equal(r.Sent, sent) {
		return nil, false
	}
	return r.Dry.DeepCopy(), true
}
