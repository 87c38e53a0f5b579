package sdkgen

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	pschema "github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// committedSchema reads schema/schema.json as committed: what the plugin
// serves and the SDKs were generated from.
func committedSchema(t *testing.T) *pschema.PackageSpec {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "schema", "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var spec pschema.PackageSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		t.Fatal(err)
	}
	return &spec
}

var exampleBlock = regexp.MustCompile("(?s)\\{\\{% example %\\}\\}\n### ([^\n]*)\n(.*?)\\{\\{% /example %\\}\\}")
var codeBlock = regexp.MustCompile("(?s)```([a-z]+)\n(.*?)\n```")

// TestPulumiDocExamplesAreTestedCode: every code block of every example in
// the committed schema is, byte for byte, the region of an example program
// that the bridge tests run, and every such region is shown. A hand edit of
// the schema, or a program changed without `make generate`, fails here.
func TestPulumiDocExamplesAreTestedCode(t *testing.T) {
	spec := committedSchema(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	regions, err := Regions(root)
	if err != nil {
		t.Fatal(err)
	}
	descriptions := map[string]string{}
	for tok, r := range spec.Resources {
		descriptions[tok] = r.Description
	}
	for tok, f := range spec.Functions {
		descriptions[tok] = f.Description
	}
	byTitle := map[string]string{} // example title -> region
	for _, e := range entityDocs {
		for _, ex := range e.examples {
			byTitle[ex.title] = ex.region
		}
	}

	shown := map[string]map[string]bool{} // region -> language -> seen
	for _, tok := range sortedSpecKeys(descriptions) {
		for _, ex := range exampleBlock.FindAllStringSubmatch(descriptions[tok], -1) {
			title, body := ex[1], ex[2]
			region, ok := byTitle[title]
			if !ok {
				t.Errorf("%s: example %q is in no entityDocs entry", tok, title)
				continue
			}
			for _, code := range codeBlock.FindAllStringSubmatch(body, -1) {
				lang, text := code[1], code[2]
				src, ok := regions[region][lang]
				switch {
				case !ok:
					t.Errorf("%s: example %q shows %s code, but no %s program marks region %q", tok, title, lang, lang, region)
				case text != src.Code:
					t.Errorf("%s: example %q's %s code differs from region %q of %s (run make generate):\n%s",
						tok, title, lang, region, src.File, firstDifference(text, src.Code))
				}
				if shown[region] == nil {
					shown[region] = map[string]bool{}
				}
				shown[region][lang] = true
			}
		}
	}
	for _, name := range regionNames(regions) {
		for lang, r := range regions[name] {
			if !shown[name][lang] {
				t.Errorf("region %q of %s is in no description of the schema (run make generate)", name, r.File)
			}
		}
	}
}

// firstDifference shows the first line where two texts differ.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n  docs:    " + gl + "\n  program: " + wl
		}
	}
	return ""
}

// TestPulumiDescriptions: every resource, function and property of the
// committed schema has a description, none speaks Terraform, and every
// resource and function shows examples (resources an Import section too).
func TestPulumiDescriptions(t *testing.T) {
	spec := committedSchema(t)
	for _, p := range PulumiTextProblems(spec) {
		t.Error(p)
	}
	for tok, r := range spec.Resources {
		for _, want := range []string{"{{% examples %}}", "\n## Import\n"} {
			if !strings.Contains(r.Description, want) {
				t.Errorf("%s: the description has no %q", tok, strings.TrimSpace(want))
			}
		}
	}
	for tok, f := range spec.Functions {
		if !strings.HasPrefix(tok, "pulumi:providers:") && !strings.Contains(f.Description, "{{% examples %}}") {
			t.Errorf("%s: the description has no examples", tok)
		}
	}
}

// requiredExampleLanguages are the languages in which every resource and
// function must show at least one example: those of the Pulumi registry's
// language chooser that the example programs cover (Java shows where a
// program has one).
var requiredExampleLanguages = []string{"typescript", "python", "go", "yaml"}

// TestPulumiExamplesInEveryLanguage: every resource and function shows, over
// all its examples, code in each of requiredExampleLanguages, so a reader who
// picks any of them sees how the call is written. Together with
// TestPulumiDocExamplesAreTestedCode, that code is code the tests ran.
func TestPulumiExamplesInEveryLanguage(t *testing.T) {
	spec := committedSchema(t)
	descriptions := map[string]string{}
	for tok, r := range spec.Resources {
		descriptions[tok] = r.Description
	}
	for tok, f := range spec.Functions {
		if !strings.HasPrefix(tok, "pulumi:providers:") { // the bridge's own terraformConfig method
			descriptions[tok] = f.Description
		}
	}
	for _, tok := range sortedSpecKeys(descriptions) {
		shown := map[string]bool{}
		for _, ex := range exampleBlock.FindAllStringSubmatch(descriptions[tok], -1) {
			for _, code := range codeBlock.FindAllStringSubmatch(ex[2], -1) {
				shown[code[1]] = true
			}
		}
		for _, lang := range requiredExampleLanguages {
			if !shown[lang] {
				t.Errorf("%s: no example in %s (mark a region in a tested %s program and list it in entityDocs)", tok, lang, lang)
			}
		}
	}
}

// TestPulumiTextProblems: the check finds what it is for.
func TestPulumiTextProblems(t *testing.T) {
	for desc, want := range map[string]string{
		"":                                       "empty description",
		"Set ignore_fields to keep them.":        `"ignore_fields"`,
		"Use it with for_each.":                  `"for_each"`,
		"Run terraform import first.":            `"terraform"`,
		"e.g. `file(\"${path.module}/a.yaml\")`": `"${path."`,
		"Prose.\n\n```hcl\nresource \"k8sconnect_object\" \"x\" {}\n```\n": `code block in "hcl"`,
	} {
		spec := &pschema.PackageSpec{Resources: map[string]pschema.ResourceSpec{
			"k8sconnect:index/x:X": {ObjectTypeSpec: pschema.ObjectTypeSpec{Description: desc}},
		}}
		got := strings.Join(PulumiTextProblems(spec), "\n")
		if !strings.Contains(got, want) {
			t.Errorf("description %q: problems %q, want one with %s", desc, got, want)
		}
	}
	// Python spells names in snake_case: code is not prose.
	ok := "Prose.\n\n```python\nk8sconnect.KubernetesObject(\"x\", yaml_body=body)\n```\n"
	spec := &pschema.PackageSpec{Resources: map[string]pschema.ResourceSpec{
		"k8sconnect:index/x:X": {ObjectTypeSpec: pschema.ObjectTypeSpec{Description: ok}},
	}}
	if p := PulumiTextProblems(spec); len(p) > 0 {
		t.Errorf("Python code was taken for prose: %v", p)
	}
}

// TestRegions: markers that do not pair up are errors, and a region keeps
// the lines of a template literal that start left of the code around it.
func TestRegions(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		p := filepath.Join(dir, "p.ts")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	got, err := fileRegions(write("x\n    // docs:begin a\n    const y = `\nkind: A\n    b: c\n`;\n    // docs:end a\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "    const y = `\nkind: A\n    b: c\n`;"; got["a"] != want {
		t.Errorf("region a = %q, want %q", got["a"], want)
	}
	got, err = fileRegions(write("  # docs:begin b\n  x = 1\n    y = 2\n  # docs:end b\n"))
	if err != nil || got["b"] != "x = 1\n  y = 2" {
		t.Errorf("region b = %q (%v), want the common indentation removed", got["b"], err)
	}
	for _, bad := range []string{
		"// docs:begin a\nx\n",
		"x\n// docs:end a\n",
		"// docs:begin a\n// docs:begin b\n// docs:end b\n// docs:end a\n",
		"// docs:begin a\n// docs:end a\n// docs:begin a\n// docs:end a\n",
	} {
		if _, err := fileRegions(write(bad)); err == nil {
			t.Errorf("markers %q: no error", bad)
		}
	}
}
