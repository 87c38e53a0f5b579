package helmrelease

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
)

// privateKey holds, per object key, what a refresh needs and the plan does
// not show: the object's apiVersion (the key has only its group), the fields
// k8sconnect owned after the last apply (ADR 0004: a field another manager
// took since still shows, with its new value) and the fields that hold
// set_sensitive values (a refresh renders nothing, yet must hide the same).
const privateKey = "release_objects"

type privateObject struct {
	APIVersion string          `json:"apiVersion"`
	Owned      json.RawMessage `json:"owned,omitempty"`
	Sensitive  []string        `json:"sensitive,omitempty"`
	// FromCRDsDir marks a CRD of crds/, never deleted (see piece).
	FromCRDsDir bool `json:"fromCRDsDir,omitempty"`
}

type private map[string]privateObject

func loadPrivate(ctx context.Context, r privatestate.Reader) (private, error) {
	p, _, err := privatestate.Load[private](ctx, r, privateKey)
	if p == nil {
		p = private{}
	}
	return p, err
}

func (p private) save(ctx context.Context, w privatestate.Writer) diag.Diagnostics {
	return privatestate.Save(ctx, w, privateKey, p)
}

// owned is the field set of the last apply, nil if none was kept.
func (o privateObject) owned() *fieldpath.Set {
	if len(o.Owned) == 0 {
		return nil
	}
	s := &fieldpath.Set{}
	if err := s.FromJSON(bytes.NewReader(o.Owned)); err != nil {
		return nil
	}
	return s
}

// redactor renders the object's sensitive values as its last apply did.
func (o privateObject) redactor(id string) sensitive.Redactor {
	var paths []objectpath.Path
	for _, s := range o.Sensitive {
		if p, err := objectpath.Parse(s); err == nil {
			paths = append(paths, p)
		}
	}
	return sensitive.New(id, paths)
}

func newPrivateObject(p piece, owned *fieldpath.Set) privateObject {
	o := privateObject{APIVersion: p.obj.GetAPIVersion(), Sensitive: p.sensitivePaths, FromCRDsDir: p.fromCRDsDir}
	if owned != nil {
		if b, err := owned.ToJSON(); err == nil {
			o.Owned = b
		}
	}
	return o
}
