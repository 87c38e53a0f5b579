// Command terraform-provider-other serves one of the stand-in providers of
// package otherproviders, chosen by the name it is started under:
// terraform-provider-<type> (a link to this binary).
package main

import (
	"context"
	"log"
	"os"
	"path/filepath"
	"strings"

	fwprovider "github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/k8sconnect/k8sconnect/internal/testing/otherproviders"
)

func main() {
	typ := strings.TrimPrefix(filepath.Base(os.Args[0]), "terraform-provider-")
	src, ok := otherproviders.ByType(typ)
	if !ok {
		log.Fatalf("no stand-in provider of type %q", typ)
	}
	err := providerserver.Serve(context.Background(), func() fwprovider.Provider { return src.Provider() },
		providerserver.ServeOpts{Address: src.Address})
	if err != nil {
		log.Fatal(err)
	}
}
