package optimeout

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func value(t *testing.T, create string) Value {
	t.Helper()
	null := Null(context.Background())
	attrs := map[string]attr.Value{}
	for name := range null.AttributeTypes(context.Background()) {
		attrs[name] = types.StringNull()
	}
	attrs["create"] = types.StringValue(create)
	return Value{Object: types.ObjectValueMust(null.AttributeTypes(context.Background()), attrs)}
}

// A value that is not a positive duration fails validation, "0s" and
// negative ones too, which the library's own check lets through.
func TestBlockRefusesWhatIsNotAPositiveDuration(t *testing.T) {
	b, _ := Block(context.Background()).(schema.SingleNestedBlock)
	for _, op := range []string{"create", "update", "delete", "read"} {
		a, _ := b.Attributes[op].(schema.StringAttribute)
		for in, ok := range map[string]bool{"30s": true, "2h45m": true, "0s": false, "-5s": false, "soon": false, "30": false} {
			var resp validator.StringResponse
			for _, v := range a.Validators {
				v.ValidateString(context.Background(), validator.StringRequest{Path: path.Root("timeouts").AtName(op),
					ConfigValue: types.StringValue(in)}, &resp)
			}
			if resp.Diagnostics.HasError() == ok {
				t.Errorf("%s = %q: error %v, want %v", op, in, resp.Diagnostics.HasError(), !ok)
			}
			if !ok && !strings.Contains(resp.Diagnostics.Errors()[0].Detail(), "not a positive duration") {
				t.Errorf("%s = %q: unclear error %q", op, in, resp.Diagnostics.Errors()[0].Detail())
			}
		}
	}
}

// Absent, the block adds no deadline; set, the deadline's cause names it.
func TestStartAndRan(t *testing.T) {
	ctx, cancel, d := Start(context.Background(), Null(context.Background()), Create)
	cancel()
	if _, has := ctx.Deadline(); has || d.HasError() {
		t.Fatalf("an absent block gave a deadline (%v)", d)
	}
	ctx, cancel, _ = Start(context.Background(), value(t, "20ms"), Create)
	defer cancel()
	if Ran(ctx) != nil {
		t.Fatal("Ran before the deadline")
	}
	<-ctx.Done()
	e := Ran(ctx)
	if e == nil || e.Setting != "timeouts.create" || e.Limit != 20*time.Millisecond {
		t.Fatalf("Ran = %+v", e)
	}
	if !errors.Is(e, context.DeadlineExceeded) {
		t.Error("an Exceeded should be a context.DeadlineExceeded")
	}
	if got := e.While("waiting for x"); got != `the create timeout (timeouts.create = "20ms") ran out while waiting for x` {
		t.Errorf("While = %q", got)
	}
	// A wait's own deadline, derived from it, is not the operation's.
	own, c2 := context.WithTimeout(context.Background(), time.Millisecond)
	defer c2()
	<-own.Done()
	if Ran(own) != nil {
		t.Error("a deadline of the code's own taken for the operation's")
	}
}

type pulumiCause struct{}

func (pulumiCause) Error() string { return "customTimeouts" }
func (pulumiCause) OperationTimeout() (string, string, time.Duration) {
	return "update", "customTimeouts.update", time.Second
}

// A cause set outside the module (the Pulumi plugin's) is known by its method.
func TestRanKnowsAForeignCause(t *testing.T) {
	ctx, cancel := context.WithDeadlineCause(context.Background(), time.Now(), pulumiCause{})
	defer cancel()
	<-ctx.Done()
	if e := Ran(ctx); e == nil || e.Setting != "customTimeouts.update" || e.Op != Update {
		t.Fatalf("Ran = %+v", e)
	}
}

// Finish names the setting once; KeepRead turns errors into one warning.
func TestFinishAndKeepRead(t *testing.T) {
	ctx, cancel := context.WithDeadlineCause(context.Background(), time.Now(), &Exceeded{Op: Read, Setting: "timeouts.read", Limit: time.Second})
	defer cancel()
	<-ctx.Done()
	var diags diag.Diagnostics
	diags.AddError("Read failed", "context deadline exceeded")
	Finish(ctx, &diags, "left")
	if len(diags.Errors()) != 2 || !strings.Contains(diags.Errors()[1].Detail(), "timeouts.read") {
		t.Errorf("Finish: %v", diags)
	}
	Finish(ctx, &diags, "left")
	if len(diags.Errors()) != 2 {
		t.Error("Finish named the setting twice")
	}
	if !KeepRead(ctx, &diags, "x") || diags.HasError() || len(diags.Warnings()) != 1 {
		t.Errorf("KeepRead: %v", diags)
	}
}
