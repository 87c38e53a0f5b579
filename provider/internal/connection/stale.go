package connection

import (
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// StaleCredentials is what a resource's Read calls on an error: when the
// server refused the credentials stored in state (a short-lived token that
// expired or was rotated since the last apply), it warns and returns true, and
// Read keeps the state as it is instead of failing. Read sees only state, so it
// cannot use the configuration's new credentials; the plan that follows does
// (it reads the live object itself), and the apply stores them.
func StaleCredentials(err error, subject string, diags *diag.Diagnostics) bool {
	if err == nil {
		return false
	}
	if !apierrors.IsUnauthorized(err) && !strings.Contains(err.Error(), "provide credentials") &&
		!strings.Contains(err.Error(), "Unauthorized") {
		return false
	}
	diags.AddWarning("Stored credentials refused: state not refreshed",
		"The API server refused the credentials this resource stored at its last apply, reading "+subject+
			" (an expired or rotated token?). Its state was not refreshed; the plan reads the object with the "+
			"configuration's connection and the next apply stores it. Keep credentials in the provider block's "+
			"cluster_connection, a kubeconfig_file or an exec plugin to avoid this.")
	return true
}
