// Package providerdata is what the provider hands every resource in Configure:
// the shared client cache and the provider-level settings.
package providerdata

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/dynamicvalue"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
)

// Data is passed as ResourceData and DataSourceData.
type Data struct {
	Clients           *connection.Cache
	OwnershipMessages ownership.Verbosity
	// Numbers says how dynamic outputs carry numbers (exact integers as
	// strings under Pulumi).
	Numbers dynamicvalue.Options
	// Status shows a progress line where the engine shows progress: Pulumi's
	// status display. A no-op under Terraform, whose users read the log.
	Status func(ctx context.Context, msg string)
	// Phase says whether the engine has started applying (see Phase).
	Phase *Phase
	// PlansRepeat: the engine plans a change more than once in a row in one
	// process. Pulumi does: its Diff, then the plan its Update makes (a
	// preview previews the Update too). Terraform and OpenTofu plan each
	// change once per process.
	PlansRepeat bool
	// Version is the provider's version, which what it writes into the
	// cluster to name its tool carries (an ApplySet's tooling).
	Version string
}

// Receive is every resource's and data source's Configure: it returns the
// provider's data, or nil while there is none yet (Terraform configures
// resources before the provider when it validates) or when v is something
// else, which it reports in diags.
func Receive(v any, diags *diag.Diagnostics) *Data {
	if v == nil {
		return nil
	}
	d, ok := v.(*Data)
	if !ok {
		diags.AddError("Unexpected provider data", fmt.Sprintf("expected *providerdata.Data, got %T; this is a bug in the provider", v))
		return nil
	}
	return d
}

// Phase is what a provider instance knows of where the engine is in its run.
//
// Engines plan every change twice: once for the plan the user sees
// (Terraform's and OpenTofu's plan, Pulumi's preview), and again right before
// applying it (the apply walk; Pulumi's update). Nothing tells the provider
// which of the two a plan request is, but an engine applies only in the second
// stage, and never makes a first-stage plan in a provider process after it has
// applied there (Terraform and OpenTofu start one process per walk). So a plan
// made after this instance has applied anything is a re-plan of a change the
// first stage already planned, and checked, with the same configuration.
type Phase struct{ applying atomic.Bool }

// Applying records that the engine asked this instance to apply a change:
// every Create, Update and Delete calls it first.
func (p *Phase) Applying() {
	if p != nil {
		p.applying.Store(true)
	}
}

// Replanning reports whether a plan made now is the engine's second plan of a
// change, made while it applies (see Phase).
func (p *Phase) Replanning() bool { return p != nil && p.applying.Load() }
