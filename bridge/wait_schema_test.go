package bridge_test

import (
	"testing"

	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/pf/tfbridge"
	shim "github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfshim"

	"github.com/k8sconnect/k8sconnect/provider"
)

// The Pulumi bridge needs a computed string id, honours no customTimeouts
// (the timeout is an attribute), and maps a dynamic status to Any.
func TestWaitSchemaThroughThePulumiBridge(t *testing.T) {
	p := tfbridge.ShimProvider(provider.New("test")())
	r, ok := p.ResourcesMap().GetOk("k8sconnect_wait")
	if !ok {
		t.Fatal("the bridge does not see k8sconnect_wait")
	}
	s := r.Schema()
	for name, want := range map[string]struct {
		typ                shim.ValueType
		computed, required bool
	}{
		"id":           {shim.TypeString, true, false},
		"status":       {shim.TypeDynamic, true, false},
		"resource_ref": {shim.TypeMap, false, true},
		"wait_for":     {shim.TypeMap, false, true},
	} {
		a, ok := s.GetOk(name)
		if !ok {
			t.Errorf("%s: not in the bridged schema", name)
			continue
		}
		if a.Type() != want.typ || a.Computed() != want.computed || a.Required() != want.required {
			t.Errorf("%s: type %v computed %v required %v; want %v %v %v",
				name, a.Type(), a.Computed(), a.Required(), want.typ, want.computed, want.required)
		}
	}
	timeout, ok := s.GetOk("wait_for")
	if ok {
		if nested, isRes := timeout.Elem().(shim.Resource); !isRes {
			t.Errorf("wait_for is not an object in the bridge: %T", timeout.Elem())
		} else if _, ok := nested.Schema().GetOk("timeout"); !ok {
			t.Error("wait_for.timeout is not in the bridged schema")
		}
	}
}
