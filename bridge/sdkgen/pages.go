package sdkgen

import (
	"bytes"
	"embed"
	"fmt"
	"sort"
	"strings"
	"text/template"

	pschema "github.com/pulumi/pulumi/pkg/v3/codegen/schema"

	"github.com/k8sconnect/k8sconnect/bridge"
	"github.com/k8sconnect/k8sconnect/internal/release"
)

// The Pulumi registry pages in docs/pulumi are generated with the schema, from
// the templates in pages/: their prose is written there, and what they say of
// the package (names, descriptions, settings, example code) comes from the
// described schema and the example programs' regions, so it cannot drift.
//
//go:embed pages/*.tmpl
var pageTemplates embed.FS

const pagesDir = "docs/pulumi"

// pages lists the generated pages by template.
var pages = map[string]string{
	"index.md.tmpl":                      pagesDir + "/_index.md",
	"installation-configuration.md.tmpl": pagesDir + "/installation-configuration.md",
}

type pageEntity struct {
	Name, Anchor string
	Summary      string // the first sentence of the description
	Prose        string // its first paragraph
}

type pageProperty struct {
	Name, Description string
}

// renderPages renders every page for the described spec.
func renderPages(spec *pschema.PackageSpec, root string) (map[string][]byte, error) {
	regions, err := Regions(root)
	if err != nil {
		return nil, err
	}
	data := map[string]any{
		"Entities":          pageEntities(spec),
		"Config":            pageProperties(spec.Config.Variables),
		"Connection":        pageProperties(spec.Types[bridge.Name+":config/clusterConnection:clusterConnection"].Properties),
		"PluginDownloadURL": bridge.PluginDownloadURL,
		"ArchiveName":       release.PulumiPluginArchiveName("<version>", "<os>", "<arch>"),
		"NodePackage":       bridge.Provider().JavaScript.PackageName,
		"PythonPackage":     bridge.Provider().Python.PackageName,
		"GoImportPath":      bridge.GoImportPath,
		"JavaGroupID":       bridge.JavaGroupID,
		"JavaArtifactID":    bridge.JavaArtifactID,
	}
	funcs := template.FuncMap{
		// chooser shows a region in every language that marks it, in the
		// registry's language chooser.
		"chooser": func(region string) (string, error) {
			langs := regions[region]
			if len(langs) == 0 {
				return "", fmt.Errorf("no example program marks region %q", region)
			}
			var names []string
			var b strings.Builder
			for _, l := range exampleLanguages {
				if r, ok := langs[l.fence]; ok {
					names = append(names, l.fence)
					fmt.Fprintf(&b, "{{%% choosable language %s %%}}\n\n```%s\n%s\n```\n\n{{%% /choosable %%}}\n", l.fence, l.fence, r.Code)
				}
			}
			return fmt.Sprintf("{{< chooser language %q >}}\n%s{{< /chooser >}}", strings.Join(names, ","), b.String()), nil
		},
	}
	out := map[string][]byte{}
	for tmpl, dst := range pages {
		t, err := template.New(tmpl).Funcs(funcs).ParseFS(pageTemplates, "pages/"+tmpl)
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		if err := t.Execute(&b, data); err != nil {
			return nil, fmt.Errorf("%s: %w", tmpl, err)
		}
		out[dst] = b.Bytes()
	}
	return out, nil
}

// pageEntities are the resources, then the functions, each with the first
// sentence of its description.
func pageEntities(spec *pschema.PackageSpec) []pageEntity {
	var res, fns []pageEntity
	for tok, r := range spec.Resources {
		res = append(res, entity(tok, r.Description))
	}
	for tok, f := range spec.Functions {
		if !strings.HasPrefix(tok, "pulumi:providers:") {
			fns = append(fns, entity(tok, f.Description))
		}
	}
	byName := func(e []pageEntity) {
		sort.Slice(e, func(i, j int) bool { return e[i].Name < e[j].Name })
	}
	byName(res)
	byName(fns)
	return append(res, fns...)
}

func entity(tok, description string) pageEntity {
	name := tok[strings.LastIndex(tok, ":")+1:]
	prose := plainText(strings.SplitN(description, "\n\n", 2)[0])
	summary := prose
	if i := strings.Index(summary, ". "); i >= 0 {
		summary = summary[:i+1]
	}
	return pageEntity{Name: name, Anchor: strings.ToLower(name), Summary: summary, Prose: prose}
}

func pageProperties(props map[string]pschema.PropertySpec) []pageProperty {
	var out []pageProperty
	for _, name := range sortedPropNames(props) {
		out = append(out, pageProperty{Name: name, Description: plainText(props[name].Description)})
	}
	return out
}

var spanText = strings.NewReplacer("</span>", "")

// plainText is a description for a table cell: the bridge's name spans
// reduced to the name they show, on one line, pipes escaped.
func plainText(s string) string {
	s = span.ReplaceAllStringFunc(s, func(m string) string {
		return spanText.Replace(m[strings.Index(m, ">")+1:])
	})
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}
