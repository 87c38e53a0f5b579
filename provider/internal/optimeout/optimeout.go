// Package optimeout is what every resource's timeouts block has in common:
// the block itself, the deadline it gives an operation's context, and the
// words used when that deadline is what ended the operation.
//
// A timeouts block that is absent, or leaves an operation unset, adds no
// limit: the operation runs as it did before the block existed, bounded only
// by the resource's own timeouts (wait_for.timeout, timeout, delete_timeout)
// and each request's cluster_connection.request_timeout. A set one bounds
// the whole operation: every wait, retry, hook and deletion inside it ends by
// then, whichever of it and the resource's own timeout ends first.
//
// The deadline travels in the context, with a cause (context.WithDeadlineCause)
// that names the setting, so whatever code finds its context done can say
// which setting ended it (Ran). Pulumi's customTimeouts reach the provider
// the same way: the plugin's server gives the operation's context a deadline
// whose cause says so (see the bridge module), and Ran knows it by its
// OperationTimeout method.
package optimeout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/durations"
)

// Op is one operation of a resource.
type Op string

const (
	Create Op = "create"
	Update Op = "update"
	Delete Op = "delete"
	Read   Op = "read"
)

// Value is the timeouts block's value in a resource's model.
type Value = timeouts.Value

// Block is the timeouts block, with create, update, delete and read. Each
// takes a positive Go duration; a value that is not one (or "0s") fails
// validation, before any plan.
func Block(ctx context.Context) schema.Block {
	b, _ := timeouts.Block(ctx, timeouts.Opts{
		Create: true, Update: true, Delete: true, Read: true,
		CreateDescription: describe("a create", "every request, retry, wait and hook of it"),
		UpdateDescription: describe("an update", "every request, retry, wait and hook of it"),
		DeleteDescription: describe("a destroy", "every request, and the wait until what it deletes is gone"),
		ReadDescription: describe("a refresh", "every request of it; one that runs out keeps the state as it was, "+
			"with a warning, as a refresh the cluster does not answer does"),
	}).(schema.SingleNestedBlock) // timeouts.Block returns one
	b.Description = "Limits on the operations of this resource, such as `create = \"10m\"`. Unset, an operation " +
		"has no limit of its own (its waits keep their own timeouts, and each request " +
		"cluster_connection.request_timeout). Set, it bounds the whole operation, waits and retries " +
		"included, whichever of it and a wait's own timeout ends first; the error then names the setting. " +
		"Under Pulumi, set the resource option customTimeouts instead: this block is not in the Pulumi schema."
	for name, a := range b.Attributes {
		s, _ := a.(schema.StringAttribute) // every attribute of the block is a string
		// The library's own check accepts "0s" and negative durations;
		// this one refuses them, in the words of the resources' other
		// timeouts.
		s.Validators = []validator.String{durations.Validator{}}
		b.Attributes[name] = s
	}
	return b
}

func describe(op, covers string) string {
	return "How long " + op + " may take, such as \"90s\" or \"15m\": " + covers + ". Unset: no limit of its own."
}

// Null is the value of an absent timeouts block, for state that a resource
// makes up itself (a moved resource).
func Null(ctx context.Context) Value {
	t, _ := Block(ctx).Type().(timeouts.Type) // the block's custom type
	return Value{Object: types.ObjectNull(t.AttrTypes)}
}

// Exceeded is the cause of an operation's context whose deadline ran out.
// It is context.DeadlineExceeded too (errors.Is), so code that asks whether
// a deadline passed finds it so.
type Exceeded struct {
	Op Op
	// Setting names what the user set: timeouts.create, or Pulumi's
	// customTimeouts.create.
	Setting string
	Limit   time.Duration
}

func (e *Exceeded) Error() string {
	return fmt.Sprintf("the %s timeout (%s = %q) ran out", e.Op, e.Setting, e.Limit.String())
}

// Is makes an Exceeded a context.DeadlineExceeded.
func (e *Exceeded) Is(target error) bool { return target == context.DeadlineExceeded }

// While words what the deadline cut short: "the create timeout
// (timeouts.create = "30s") ran out while waiting for ...".
func (e *Exceeded) While(doing string) string { return e.Error() + " while " + doing }

// foreign is a cause set outside this module (the Pulumi plugin's server,
// for customTimeouts), known by its method rather than its type.
type foreign interface {
	OperationTimeout() (op, setting string, limit time.Duration)
}

// Start gives ctx the deadline that v sets for op, and returns ctx as it is
// when v sets none. The caller defers cancel.
func Start(ctx context.Context, v Value, op Op) (context.Context, context.CancelFunc, diag.Diagnostics) {
	var d time.Duration
	var diags diag.Diagnostics
	if !v.IsNull() && !v.IsUnknown() {
		switch op {
		case Create:
			d, diags = v.Create(ctx, 0)
		case Update:
			d, diags = v.Update(ctx, 0)
		case Delete:
			d, diags = v.Delete(ctx, 0)
		case Read:
			d, diags = v.Read(ctx, 0)
		}
	}
	if diags.HasError() || d <= 0 {
		return ctx, func() {}, diags
	}
	return WithDeadline(ctx, op, "timeouts."+string(op), d)
}

// WithDeadline bounds ctx by limit from now, the cause naming setting. A
// deadline ctx already has that ends sooner stays, with its own cause.
func WithDeadline(ctx context.Context, op Op, setting string, limit time.Duration) (context.Context, context.CancelFunc, diag.Diagnostics) {
	ctx, cancel := context.WithDeadlineCause(ctx, time.Now().Add(limit), &Exceeded{Op: op, Setting: setting, Limit: limit})
	return ctx, cancel, nil
}

// Ran is the operation's deadline when it is what ended ctx; nil when ctx
// is not done, or ended otherwise (cancelled, or a deadline of the code's
// own, such as a wait's timeout).
func Ran(ctx context.Context) *Exceeded {
	if ctx.Err() == nil {
		return nil
	}
	return Of(context.Cause(ctx))
}

// Of finds the operation's deadline in err's chain; nil when it is not there.
func Of(err error) *Exceeded {
	var e *Exceeded
	if errors.As(err, &e) {
		return e
	}
	var f foreign
	if errors.As(err, &f) {
		op, setting, limit := f.OperationTimeout()
		return &Exceeded{Op: Op(op), Setting: setting, Limit: limit}
	}
	return nil
}

// Finish, called when an operation returns, makes sure that an operation
// that failed because its deadline ran out says so: when ctx's deadline ran
// out and no error already names the setting, it adds one that does. left
// says what the operation leaves as it is.
func Finish(ctx context.Context, diags *diag.Diagnostics, left string) {
	e := Ran(ctx)
	if e == nil || !diags.HasError() {
		return
	}
	for _, d := range diags.Errors() {
		if strings.Contains(d.Summary()+d.Detail(), e.Setting) {
			return
		}
	}
	detail := e.Error() + " before the " + string(e.Op) + " was done; the errors above are what it cut short."
	if left != "" {
		detail += " " + left
	}
	diags.AddError(title(e), detail)
}

func title(e *Exceeded) string {
	return strings.ToUpper(string(e.Op[:1])) + string(e.Op[1:]) + " timed out (" + e.Setting + ")"
}

// KeepRead turns the errors of a refresh whose deadline ran out into one
// warning, so that the refresh keeps the state as it was, as a refresh that
// the cluster does not answer does; it reports whether it did, and then the
// caller gives back the prior state. subject names what was refreshed.
func KeepRead(ctx context.Context, diags *diag.Diagnostics, subject string) bool {
	e := Ran(ctx)
	if e == nil || !diags.HasError() {
		return false
	}
	var kept diag.Diagnostics
	var lines []string
	for _, d := range *diags {
		if d.Severity() == diag.SeverityError {
			lines = append(lines, strings.TrimSpace(d.Summary()+": "+d.Detail()))
			continue
		}
		kept = append(kept, d)
	}
	kept.AddWarning("Could not refresh "+subject+"; state kept as it was",
		e.While("refreshing "+subject)+".\n\n"+strings.Join(lines, "\n"))
	*diags = kept
	return true
}
