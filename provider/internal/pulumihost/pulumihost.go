// Package pulumihost is what the provider does differently when the Pulumi
// engine calls it through the bridge, so a Pulumi user hears it in Pulumi's
// terms:
//
//   - messages name properties and resources as a Pulumi program spells them
//     (ignoreFields, waitFor.rollout, KubernetesObject), not as HCL does;
//   - a warning is said once per run: the engine plans a resource more than
//     once in one preview (diff, then the preview of the update), and each
//     plan would repeat it;
//   - progress (a wait's "2/3 replicas ready") goes to the engine's status
//     display, which `pulumi up` shows by default, where Terraform users read
//     it in the provider log.
//
// Terraform and OpenTofu never see any of this: the provider wraps its
// resources and data sources only when built for Pulumi.
package pulumihost

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"

	"github.com/k8sconnect/k8sconnect/provider/internal/diagtext"
)

// Options is what the bridge tells the provider about the engine.
type Options struct {
	// Status shows msg in the engine's status display for the resource whose
	// operation ctx belongs to.
	Status func(ctx context.Context, msg string)
	// ResourceNames maps Terraform type names (k8sconnect_object) to the names
	// Pulumi programs use (KubernetesObject). The bridge may fill it after New,
	// once it has computed its tokens, and before the first call.
	ResourceNames map[string]string
}

// Host speaks to the Pulumi engine for every resource of one provider process.
type Host struct {
	opts  Options
	names map[string]string // Terraform name -> Pulumi name

	mu      sync.Mutex
	said    map[string]bool // warnings already given
	learned sync.Map        // the Go types whose schemas learn has read
}

// New returns a Host; Resource and DataSource teach it their attribute names.
func New(opts Options) *Host {
	return &Host{opts: opts, names: map[string]string{}, said: map[string]bool{}}
}

// Status shows msg in the engine's status display (no-op without one).
func (h *Host) Status(ctx context.Context, msg string) {
	if h != nil && h.opts.Status != nil {
		h.opts.Status(ctx, msg)
	}
}

// learn records the Pulumi spelling of every snake_case attribute name.
func (h *Host) learn(attrs map[string]schema.Attribute) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var walk func(map[string]schema.Attribute)
	walk = func(attrs map[string]schema.Attribute) {
		for name, a := range attrs {
			if strings.Contains(name, "_") {
				if _, ok := h.names[name]; !ok {
					h.names[name] = CamelCase(name)
				}
			}
			if n, ok := a.(schema.SingleNestedAttribute); ok {
				walk(n.Attributes)
			}
		}
	}
	walk(attrs)
}

// learnDataSource is learn for a data source's schema.
func (h *Host) learnDataSource(attrs map[string]dschema.Attribute) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var walk func(map[string]dschema.Attribute)
	walk = func(attrs map[string]dschema.Attribute) {
		for name, a := range attrs {
			if _, ok := h.names[name]; !ok && strings.Contains(name, "_") {
				h.names[name] = CamelCase(name)
			}
			if n, ok := a.(dschema.SingleNestedAttribute); ok {
				walk(n.Attributes)
			}
		}
	}
	walk(attrs)
}

// CamelCase is the Pulumi property name of a Terraform attribute name, as the
// bridge derives it: ignore_fields -> ignoreFields.
func CamelCase(name string) string {
	parts := strings.Split(name, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

var identifier = regexp.MustCompile(`[A-Za-z0-9_]+`)

// Translate rewrites every whole Terraform name in s as Pulumi spells it.
func (h *Host) Translate(s string) string {
	if !strings.Contains(s, "_") {
		return s
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return identifier.ReplaceAllStringFunc(s, func(word string) string {
		if pulumi, ok := h.opts.ResourceNames[word]; ok {
			return pulumi
		}
		if pulumi, ok := h.names[word]; ok {
			return pulumi
		}
		return word
	})
}

// speak puts diags in Pulumi's terms and drops warnings already given.
func (h *Host) speak(diags *diag.Diagnostics) {
	diagtext.Rewrite(diags, h.Translate)
	h.mu.Lock()
	defer h.mu.Unlock()
	out := (*diags)[:0]
	for _, d := range *diags {
		if d.Severity() == diag.SeverityWarning {
			key := d.Summary() + "\x00" + d.Detail()
			if wp, ok := d.(diag.DiagnosticWithPath); ok {
				key += "\x00" + wp.Path().String()
			}
			if h.said[key] {
				continue
			}
			h.said[key] = true
		}
		out = append(out, d)
	}
	*diags = out
}

// Resource wraps r so that its diagnostics speak Pulumi's terms. The wrapper
// offers import and state moves exactly when r does.
func (h *Host) Resource(r resource.Resource) resource.Resource {
	// The framework makes a resource for every call: read its schema once.
	if _, seen := h.learned.LoadOrStore(fmt.Sprintf("%T", r), true); !seen {
		var s resource.SchemaResponse
		r.Schema(context.Background(), resource.SchemaRequest{}, &s)
		h.learn(s.Schema.Attributes)
	}
	w := &wrappedResource{inner: r, host: h}
	if _, ok := r.(resource.ResourceWithImportState); ok {
		return &importableResource{wrappedResource: w}
	}
	return w
}

// DataSource wraps d like Resource.
func (h *Host) DataSource(d datasource.DataSource) datasource.DataSource {
	if _, seen := h.learned.LoadOrStore(fmt.Sprintf("%T", d), true); !seen {
		var s datasource.SchemaResponse
		d.Schema(context.Background(), datasource.SchemaRequest{}, &s)
		h.learnDataSource(s.Schema.Attributes)
	}
	return &wrappedDataSource{inner: d, host: h}
}
