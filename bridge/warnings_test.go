package bridge_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// The API server's warnings (here a deprecated node label in a Pod template)
// reach `pulumi preview` as warnings, as kubectl prints them.
func TestPulumiObject_serverWarningsInPreview(t *testing.T) {
	ns := acctest.Namespace(t)
	stack := newObjectStack(t, objects{"web": {body: fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %s}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {beta.kubernetes.io/os: linux}
      containers: [{name: app, image: nginx:1.27}]
`, ns)}})
	res := stack.Run(pulumitest.Preview, nil)
	if !strings.Contains(res.Log, "The API server warns about Deployment") || !strings.Contains(res.Log, "beta.kubernetes.io/os") {
		t.Fatalf("the preview does not carry the server's deprecation warning:\n%s", res.Log)
	}
}
