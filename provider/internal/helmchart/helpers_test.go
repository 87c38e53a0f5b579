package helmchart_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/chartrepo"
	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
)

// The credentials of every protected test server. The password is long and
// odd enough that finding it in an error cannot be a coincidence.
const (
	testUser     = "chart-reader"
	testPassword = "s3cret-Pa55word-q7"
)

// isolatedCache points the chart cache at a directory of the test's own, so
// that tests neither share downloads nor touch the user's cache.
func isolatedCache(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv(helmchart.CacheDirEnv, dir)
	return dir
}

// repositoryWith starts a repository holding app at each version.
func repositoryWith(t *testing.T, opts chartrepo.Options, name string, versions ...string) *chartrepo.Repository {
	t.Helper()
	repo := chartrepo.NewRepository(t, opts)
	for _, v := range versions {
		repo.Add(t, chartrepo.MustPackage(t, chartrepo.Chart(name, v)))
	}
	return repo
}

func mustLoad(t *testing.T, src helmchart.Source) *helmchart.Chart {
	t.Helper()
	c, err := helmchart.Load(context.Background(), src)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c
}

// loadError loads src, which must fail, and returns the message, having
// checked that it gives away no secret.
func loadError(t *testing.T, src helmchart.Source) string {
	t.Helper()
	c, err := helmchart.Load(context.Background(), src)
	if err == nil {
		t.Fatalf("Load succeeded with version %s; want an error", c.Version)
	}
	msg := err.Error()
	t.Logf("the error: %s", msg)
	assertNoSecret(t, msg)
	return msg
}

func assertNoSecret(t *testing.T, msg string) {
	t.Helper()
	for _, secret := range []string{testPassword, base64.StdEncoding.EncodeToString([]byte(testUser + ":" + testPassword)), testUser + ":"} {
		if strings.Contains(msg, secret) {
			t.Fatalf("the error gives away a credential (%q): %s", secret, msg)
		}
	}
}

func assertContains(t *testing.T, msg string, parts ...string) {
	t.Helper()
	for _, part := range parts {
		if !strings.Contains(msg, part) {
			t.Errorf("error %q does not say %q", msg, part)
		}
	}
}
