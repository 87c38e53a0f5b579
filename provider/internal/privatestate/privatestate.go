// Package privatestate keeps what resources remember between operations without
// showing it in the schema (ADR 0004): the fields we owned at our last apply and
// their values, and how often a field was reverted from the same manager.
package privatestate

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/k8sconnect/k8sconnect/provider/internal/managedfields"
)

// Keys used by k8sconnect resources.
const (
	// OwnedFields: the field set our manager owned after our last apply, so a
	// refresh can still show a field another manager has taken from us.
	OwnedFields = "owned_fields"
	// AppliedProjection: our fields' values at our last apply, where they
	// differ from the projection in state. A refresh overwrites the
	// projection in state with live values, so this is what "external
	// changed" is measured against (ADR 0008: value-based). Absent while the
	// state's projection is that record (ownership.Record).
	AppliedProjection = "applied_projection"
	// RevertStreaks: consecutive applies that reverted a field from the same
	// manager; absent when there are none.
	RevertStreaks = "revert_streaks"
	// ClusterIdentities: every identity of the cluster seen when the resource
	// last acted there (connection.ClusterCheck.Seen), so that credentials
	// that cannot read cluster_uid's source can check another.
	ClusterIdentities = "cluster_identities"
	// ClusterPin: the cluster_connection.cluster_id the resource was last
	// confirmed under (connection.ClusterCheck.Pin), so that a run under
	// another one is refused; absent when none was set.
	ClusterPin = "cluster_id"
)

// Reader is the read side of the framework's private state.
type Reader interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

// Writer is the write side.
type Writer interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// ReadWriter reads one private state and writes another (or the same).
type ReadWriter interface {
	Reader
	Writer
}

// Load decodes a JSON value; a missing key gives the zero value and ok=false.
func Load[T any](ctx context.Context, r Reader, key string) (v T, ok bool, err error) {
	raw, diags := r.GetKey(ctx, key)
	if diags.HasError() {
		return v, false, fmt.Errorf("private state %s: %v", key, diags)
	}
	if len(raw) == 0 {
		return v, false, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, false, fmt.Errorf("private state %s: %w", key, err)
	}
	return v, true, nil
}

// Save encodes v as JSON.
func Save(ctx context.Context, w Writer, key string, v any) diag.Diagnostics {
	raw, err := json.Marshal(v)
	if err != nil {
		var d diag.Diagnostics
		d.AddWarning("Could not record private state", err.Error())
		return d
	}
	return w.SetKey(ctx, key, raw)
}

// LoadFieldSet reads a managedFields-style field set.
func LoadFieldSet(ctx context.Context, r Reader, key string) (*fieldpath.Set, error) {
	raw, diags := r.GetKey(ctx, key)
	if diags.HasError() {
		return nil, fmt.Errorf("private state %s: %v", key, diags)
	}
	if len(raw) == 0 {
		return nil, nil
	}
	// Read with every digit of list-map keys and set values kept (see ParseSet).
	s, err := managedfields.ParseSet(raw)
	if err != nil {
		return nil, fmt.Errorf("private state %s: %w", key, err)
	}
	return s, nil
}

// SaveFieldSet writes a field set in managedFields' own encoding.
func SaveFieldSet(ctx context.Context, w Writer, key string, s *fieldpath.Set) diag.Diagnostics {
	raw, err := s.ToJSON()
	if err != nil {
		var d diag.Diagnostics
		d.AddWarning("Could not record owned fields", err.Error())
		return d
	}
	return w.SetKey(ctx, key, raw)
}

// Plan reads the prior private state and writes the planned one in ModifyPlan.
type Plan struct {
	Req  resource.ModifyPlanRequest
	Resp *resource.ModifyPlanResponse
}

func (p Plan) GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics) {
	return p.Req.Private.GetKey(ctx, key)
}

func (p Plan) SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics {
	return p.Resp.Private.SetKey(ctx, key, value)
}

// Of is the private state of one object of a resource that holds many (a
// Helm release's): every key prefixed with the object's, so each object keeps
// the entries above apart. R or W may be nil where only one side is used.
type Of struct {
	R      Reader
	W      Writer
	Object string
}

func (o Of) GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics) {
	return o.R.GetKey(ctx, o.Object+"|"+key)
}

func (o Of) SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics {
	return o.W.SetKey(ctx, o.Object+"|"+key, value)
}
