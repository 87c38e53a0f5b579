package manifestset

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
)

// privateKey holds, per object key, what a refresh and a destroy need and
// the plan does not show: the object's apiVersion (the key has only its
// group), a hash of the body the last apply sent, so that a plan of the
// same body for an object untouched since needs no dry run, and whether
// the last apply's wait left it not ready. What
// k8sconnect_object keeps of its one object (ADR 0004, 0008) is kept per
// object under privatestate.Of.
const privateKey = "set_objects"

type privateObject struct {
	APIVersion string `json:"apiVersion"`
	Body       string `json:"body,omitempty"`
	// NotReady: the last apply's wait ended before the object was ready,
	// so the next plan applies it again and its apply waits again (a
	// refresh alone would find it as applied and plan nothing).
	NotReady bool `json:"notReady,omitempty"`
}

type private map[string]privateObject

func loadPrivate(ctx context.Context, r privatestate.Reader) private {
	p, _, err := privatestate.Load[private](ctx, r, privateKey)
	if err != nil || p == nil {
		return private{}
	}
	return p
}

func (p private) save(ctx context.Context, w privatestate.Writer) diag.Diagnostics {
	return privatestate.Save(ctx, w, privateKey, p)
}
