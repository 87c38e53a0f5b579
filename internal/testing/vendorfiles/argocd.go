package vendorfiles

import (
	"slices"
	"strings"
	"testing"
)

// ArgoCDDocuments splits Argo CD's install.yaml as a user's editor sees it:
// the text of each of its 59 documents. It fails the test when the file
// holds another number: not the file the tests were written for.
func ArgoCDDocuments(t testing.TB) []string {
	t.Helper()
	var docs []string
	for _, d := range strings.Split(string(ArgoCDInstall.Read(t)), "\n---\n") {
		if strings.TrimSpace(d) != "" {
			docs = append(docs, d)
		}
	}
	if len(docs) != 59 {
		t.Fatalf("install.yaml holds %d documents, want 59: not the file the tests were written for", len(docs))
	}
	return docs
}

// JoinDocuments is the file a user writes back from docs.
func JoinDocuments(docs []string) string {
	return strings.Join(docs, "\n---\n") + "\n"
}

// ArgoCDInsecure is docs with the edit a user behind a TLS-ending ingress
// makes: server.insecure set in argocd-cmd-params-cm. It fails the test when
// the file has no such ConfigMap to edit.
func ArgoCDInsecure(t testing.TB, docs []string) []string {
	t.Helper()
	edited := slices.Clone(docs)
	for i, d := range edited {
		if strings.HasPrefix(d, "apiVersion: v1\nkind: ConfigMap\n") && strings.HasSuffix(d, "\n  name: argocd-cmd-params-cm") {
			edited[i] = d + "\ndata:\n  server.insecure: \"true\""
		}
	}
	if slices.Equal(edited, docs) {
		t.Fatal("install.yaml has no argocd-cmd-params-cm to edit")
	}
	return edited
}

// ArgoCDWithoutDex is docs without Dex, Argo CD's SSO server, as a user who
// does not need SSO cuts it: the six documents of everything named
// argocd-dex-server* (its ServiceAccount, Role, RoleBinding, Service,
// Deployment and NetworkPolicy). It fails the test unless six are cut.
func ArgoCDWithoutDex(t testing.TB, docs []string) (kept, cut []string) {
	t.Helper()
	for _, d := range docs {
		if strings.Contains(d, "\n  name: argocd-dex-server") {
			cut = append(cut, d)
		} else {
			kept = append(kept, d)
		}
	}
	if len(cut) != 6 {
		t.Fatalf("cut %d documents of Dex, want 6", len(cut))
	}
	return kept, cut
}
