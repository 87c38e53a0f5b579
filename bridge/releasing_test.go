package bridge

import (
	"reflect"
	"testing"

	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/pf/tfbridge"

	"github.com/k8sconnect/k8sconnect/provider"
)

// The bridge finds optional features of ProviderInfo.P by type assertion, so
// a method of the bridge's own shim that releasingContexts does not forward
// is a feature silently lost, and one it forwards that the shim no longer has
// claims a feature that is not there. A bridge upgrade that changes either
// fails here.
func TestReleasingShimKeepsTheBridgesMethods(t *testing.T) {
	inner := reflect.TypeOf(tfbridge.ShimProvider(provider.New("test")()))
	wrapper := reflect.TypeOf(releasingContexts{})
	for i := range inner.NumMethod() {
		name := inner.Method(i).Name
		if _, ok := wrapper.MethodByName(name); !ok {
			t.Errorf("releasingContexts lacks %s of the bridge's shim (%s): forward it", name, inner)
		}
	}
	for i := range wrapper.NumMethod() {
		name := wrapper.Method(i).Name
		if _, ok := inner.MethodByName(name); !ok {
			t.Errorf("releasingContexts forwards %s, which the bridge's shim (%s) no longer has", name, inner)
		}
	}
	if p := Provider().P; reflect.TypeOf(p) != wrapper {
		t.Errorf("ProviderInfo.P is %T, not served through rpccontext", p)
	}
}
