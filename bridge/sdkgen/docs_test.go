package sdkgen

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
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
		"Such as `{ \"status.phase\" = \"Bound\" }`.":                      `wording "{ \"status.phase\" = `,
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
	for _, ok := range []string{
		// Python spells names in snake_case: code is not prose.
		"Prose.\n\n```python\nk8sconnect.KubernetesObject(\"x\", yaml_body=body)\n```\n",
		// Pulumi's languages write a map with colons.
		"Such as `{ \"status.phase\": \"Bound\" }`.",
	} {
		spec := &pschema.PackageSpec{Description: "A package.", Resources: map[string]pschema.ResourceSpec{
			"k8sconnect:index/x:X": {ObjectTypeSpec: pschema.ObjectTypeSpec{Description: ok}},
		}}
		if p := PulumiTextProblems(spec); len(p) > 0 {
			t.Errorf("%q: problems %v", ok, p)
		}
	}
}

// TestPulumiTermsUnused: an entry of pulumiTerms that no text matched is
// named, so advice it adds for Pulumi users cannot drop out unseen.
func TestPulumiTermsUnused(t *testing.T) {
	tr := newTranslator(&pschema.PackageSpec{})
	tr.translate("Intro. " + pulumiTerms[0].tf)
	unused := tr.unused()
	if len(unused) != len(pulumiTerms)-1 || strings.Contains(strings.Join(unused, "\n"), pulumiTerms[0].tf) {
		t.Errorf("after the first entry matched, unused = %q", unused)
	}
}

// terraformText is the Terraform advice that once reached the SDKs through a
// resource's state inputs, which the check did not read.
const terraformText = "For a Secret, wrap it in sensitive() so plans hide it."

// TestPulumiTextProblemsEverywhere: Terraform wording is found wherever a
// description sits, and named by where it sits, including the places the
// check once skipped (state inputs, types' own descriptions, the provider's).
func TestPulumiTextProblemsEverywhere(t *testing.T) {
	const res, typ, fn = "k8sconnect:index/x:X", "k8sconnect:index/T:T", "k8sconnect:index/getX:getX"
	bad := map[string]pschema.PropertySpec{"yamlBody": {Description: terraformText}}
	for where, spec := range map[string]*pschema.PackageSpec{
		res + " state.yamlBody": {Resources: map[string]pschema.ResourceSpec{
			res: {StateInputs: &pschema.ObjectTypeSpec{Properties: bad}}}},
		res + " state": {Resources: map[string]pschema.ResourceSpec{
			res: {StateInputs: &pschema.ObjectTypeSpec{Description: terraformText}}}},
		res + " list.yamlBody": {Resources: map[string]pschema.ResourceSpec{
			res: {ListInputs: &pschema.ObjectTypeSpec{Properties: bad}}}},
		res + " input.yamlBody": {Resources: map[string]pschema.ResourceSpec{res: {InputProperties: bad}}},
		res + ".yamlBody": {Resources: map[string]pschema.ResourceSpec{
			res: {ObjectTypeSpec: pschema.ObjectTypeSpec{Properties: bad}}}},
		res + " input.yamlBody (deprecation)": {Resources: map[string]pschema.ResourceSpec{
			res: {InputProperties: map[string]pschema.PropertySpec{"yamlBody": {DeprecationMessage: terraformText}}}}},
		typ + ":": {Types: map[string]pschema.ComplexTypeSpec{
			typ: {ObjectTypeSpec: pschema.ObjectTypeSpec{Description: terraformText}}}},
		typ + ".yamlBody": {Types: map[string]pschema.ComplexTypeSpec{
			typ: {ObjectTypeSpec: pschema.ObjectTypeSpec{Properties: bad}}}},
		typ + " enum Plain": {Types: map[string]pschema.ComplexTypeSpec{
			typ: {Enum: []pschema.EnumValueSpec{{Name: "Plain", Value: "plain", Description: terraformText}}}}},
		fn + " input:": {Functions: map[string]pschema.FunctionSpec{
			fn: {Inputs: &pschema.ObjectTypeSpec{Description: terraformText}}}},
		fn + " input.yamlBody": {Functions: map[string]pschema.FunctionSpec{
			fn: {Inputs: &pschema.ObjectTypeSpec{Properties: bad}}}},
		fn + " output.yamlBody": {Functions: map[string]pschema.FunctionSpec{
			fn: {Outputs: &pschema.ObjectTypeSpec{Properties: bad}}}},
		"config.yamlBody": {Config: pschema.ConfigSpec{Variables: bad}},
		"provider:": {Provider: &pschema.ResourceSpec{
			ObjectTypeSpec: pschema.ObjectTypeSpec{Description: terraformText}}},
		"provider input.yamlBody": {Provider: &pschema.ResourceSpec{InputProperties: bad}},
		"provider.yamlBody": {Provider: &pschema.ResourceSpec{
			ObjectTypeSpec: pschema.ObjectTypeSpec{Properties: bad}}},
		"package:": {Description: terraformText},
	} {
		problems := PulumiTextProblems(spec)
		found := false
		for _, p := range problems {
			found = found || strings.HasPrefix(p, where) && strings.Contains(p, `"sensitive("`)
		}
		if !found {
			t.Errorf("Terraform wording at %s: not found, problems %q", where, problems)
		}
	}
}

// TestPulumiTextProblemsReadsEveryField: every description and deprecation
// message that pschema.PackageSpec can hold, found by reflection over its
// types rather than listed by hand, is read by the check, so a field the
// check does not know (one a newer pulumi adds) fails here, not silently.
func TestPulumiTextProblemsReadsEveryField(t *testing.T) {
	var spec pschema.PackageSpec
	var fields []string
	fillTexts(reflect.ValueOf(&spec).Elem(), terraformText, "spec", map[reflect.Type]bool{}, &fields)
	if len(fields) < 20 {
		t.Fatalf("only %d text fields found by reflection: %v", len(fields), fields)
	}
	problems := PulumiTextProblems(&spec)
	if len(problems) != len(fields) {
		t.Errorf("%d text fields hold Terraform wording, the check reports %d:\nfields:\n  %s\nproblems:\n  %s",
			len(fields), len(problems), strings.Join(fields, "\n  "), strings.Join(problems, "\n  "))
	}
	for _, p := range problems {
		if !strings.Contains(p, `"sensitive("`) {
			t.Errorf("not the planted wording: %s", p)
		}
	}
	// And the translator reaches the same texts: a snake_case name of a
	// property of the package becomes its camelCase name in each of them but
	// the resources' and functions' own, which describe writes.
	var named pschema.PackageSpec
	var all []string
	fillTexts(reflect.ValueOf(&named).Elem(), "Set yaml_body.", "spec", map[reflect.Type]bool{}, &all)
	named.Config.Variables["yamlBody"] = pschema.PropertySpec{}
	newTranslator(&named).all(&named)
	walkTexts(&named, func(st schemaText, s string) string {
		if !st.code && s != "" && s != "Set yamlBody." {
			t.Errorf("%s: the translator left %q", st.where, s)
		}
		return s
	})
}

// fillTexts makes every struct reachable from v exist once (one entry in each
// map and slice of structs, every pointer to a struct set, each type once on
// a path), sets every Description and DeprecationMessage to text and lists
// their paths in fields.
func fillTexts(v reflect.Value, text, path string, onPath map[reflect.Type]bool, fields *[]string) {
	switch v.Kind() {
	case reflect.Struct:
		if onPath[v.Type()] {
			return
		}
		onPath[v.Type()] = true
		defer delete(onPath, v.Type())
		for i := 0; i < v.NumField(); i++ {
			f, sf := v.Field(i), v.Type().Field(i)
			switch {
			case !sf.IsExported():
			case f.Kind() == reflect.String && (sf.Name == "Description" || sf.Name == "DeprecationMessage"):
				f.SetString(text)
				*fields = append(*fields, path+"."+sf.Name)
			default:
				fillTexts(f, text, path+"."+sf.Name, onPath, fields)
			}
		}
	case reflect.Pointer:
		if v.Type().Elem().Kind() == reflect.Struct && !onPath[v.Type().Elem()] {
			v.Set(reflect.New(v.Type().Elem()))
			fillTexts(v.Elem(), text, path, onPath, fields)
		}
	case reflect.Map:
		if v.Type().Key().Kind() == reflect.String && v.Type().Elem().Kind() == reflect.Struct && !onPath[v.Type().Elem()] {
			elem := reflect.New(v.Type().Elem()).Elem()
			fillTexts(elem, text, path+"[k]", onPath, fields)
			v.Set(reflect.MakeMap(v.Type()))
			v.SetMapIndex(reflect.ValueOf("k").Convert(v.Type().Key()), elem)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Struct && !onPath[v.Type().Elem()] {
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
			fillTexts(v.Index(0), text, path+"[0]", onPath, fields)
		}
	}
}

// TestPulumiTextProblemsBridgeMethod: the bridge's terraformConfig method
// passes in the words bridgeMethodDocs holds, and in no others.
func TestPulumiTextProblemsBridgeMethod(t *testing.T) {
	for tok, doc := range bridgeMethodDocs {
		for desc, wantProblem := range map[string]bool{doc: false, doc + " Wrap it in sensitive().": true} {
			spec := &pschema.PackageSpec{Description: "A package.",
				Functions: map[string]pschema.FunctionSpec{tok: {Description: desc}}}
			if p := PulumiTextProblems(spec); (len(p) > 0) != wantProblem {
				t.Errorf("%s reading %q: problems %q", tok, desc, p)
			}
		}
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
