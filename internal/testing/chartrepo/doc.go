// Package chartrepo serves Helm charts on loopback for tests, the two ways
// users keep them: an HTTP chart repository (an index.yaml and the archives
// it lists) and an OCI registry (go-containerregistry's in-memory registry).
// Either can sit behind basic auth, and is served over TLS with a
// certificate from internal/testing/pki; the HTTP repository can also demand
// a client certificate. Both log the requests they get, so that tests can
// count downloads and see which requests carried credentials. A Signer,
// a key made for one test, signs charts as `helm package --sign` does, and
// both serve the provenance files beside the charts (AddSigned,
// PushWithProvenance).
//
// The charts are tiny ones made here (Chart), never copies of public charts.
package chartrepo
