package connection

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// The API server attaches warnings to its answers (a deprecated apiVersion, a
// deprecated label in a nodeSelector, an admission webhook's advice). kubectl
// prints them; k8sconnect hands them to the engine as plan and apply warnings,
// so Terraform, OpenTofu and Pulumi users see them too. Each operation collects
// the warnings of its own requests through its context.

type warningsKey struct{}

type warningCollector struct {
	mu   sync.Mutex
	seen map[string]bool
	list []string
}

// CollectWarnings returns a context whose requests' warnings are kept, and a
// function that returns them, each once, in the order they came.
func CollectWarnings(ctx context.Context) (context.Context, func() []string) {
	c := &warningCollector{seen: map[string]bool{}}
	return context.WithValue(ctx, warningsKey{}, c), func() []string {
		c.mu.Lock()
		defer c.mu.Unlock()
		return append([]string(nil), c.list...)
	}
}

// serverWarnings is the client's rest.WarningHandlerWithContext.
type serverWarnings struct{}

func (serverWarnings) HandleWarningHeaderWithContext(ctx context.Context, code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	c, ok := ctx.Value(warningsKey{}).(*warningCollector)
	if !ok {
		tflog.Warn(ctx, "API server warning", map[string]any{"warning": text})
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.seen[text] {
		c.seen[text] = true
		c.list = append(c.list, text)
	}
}

// AddWarnings adds each API server warning to diags, as the engine shows them.
func AddWarnings(diags *diag.Diagnostics, object string, texts []string) {
	for _, text := range texts {
		diags.AddWarning("The API server warns about "+object, text)
	}
}
