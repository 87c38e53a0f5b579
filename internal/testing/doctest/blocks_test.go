package doctest

import (
	"strings"
	"testing"
)

func TestBlocksReadsMarkers(t *testing.T) {
	page := "Intro.\n\n<!-- doctest: run setup=eks-aws-node,storefront -->\n```terraform\nresource \"a\" \"b\" {}\n```\n\n" +
		"<!-- doctest: skip: needs an AWS account -->\n\n```hcl\nmodule \"eks\" {}\n```\n\n" +
		"```text\nWarning: Drift\n```\n\n  ~~~~tf\n  locals {}\n  ```\n  ~~~~\n"
	blocks, err := Blocks("p.md", []byte(page))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 4 {
		t.Fatalf("want 4 blocks, got %d: %+v", len(blocks), blocks)
	}
	if m := blocks[0].Marker; m == nil || !m.Run || strings.Join(m.Setups, ",") != "eks-aws-node,storefront" || blocks[0].Code != "resource \"a\" \"b\" {}\n" {
		t.Errorf("block 1: %+v marker %+v", blocks[0], blocks[0].Marker)
	}
	if m := blocks[1].Marker; m == nil || m.Run || m.Reason != "needs an AWS account" {
		t.Errorf("block 2 marker: %+v", m)
	}
	if blocks[2].Marker != nil || blocks[2].IsHCL() {
		t.Errorf("block 3: %+v", blocks[2])
	}
	// An indented fence of four tildes holds a ``` line, and no marker.
	if blocks[3].Code != "locals {}\n```\n" || blocks[3].Marker != nil || blocks[3].Line != 18 {
		t.Errorf("block 4: %+v", blocks[3])
	}
	err = Check(blocks, map[string]bool{"eks-aws-node": true, "storefront": true})
	if err == nil || !strings.Contains(err.Error(), "p.md:18: an HCL block without a doctest marker") {
		t.Errorf("Check must refuse the unmarked tf block, got %v", err)
	}
	if err := Check(blocks[:3], map[string]bool{"eks-aws-node": true}); err == nil || !strings.Contains(err.Error(), `unknown setup "storefront"`) {
		t.Errorf("Check must refuse an unknown setup, got %v", err)
	}
}

func TestBlocksRefusesWhatCouldHideCode(t *testing.T) {
	for name, page := range map[string]string{
		"fence without a language":   "```\nresource \"a\" \"b\" {}\n```\n",
		"unclosed fence":             "```terraform\nresource \"a\" \"b\" {}\n",
		"skip without a reason":      "<!-- doctest: skip: -->\n```terraform\nx\n```\n",
		"misspelt marker":            "<!-- doctest: runn -->\n```terraform\nx\n```\n",
		"run with an unknown option": "<!-- doctest: run engine=tofu -->\n```terraform\nx\n```\n",
	} {
		if _, err := Blocks("p.md", []byte(page)); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
	// A marker applies only to the fence right after it.
	blocks, err := Blocks("p.md", []byte("<!-- doctest: run -->\nSome text.\n```terraform\nx\n```\n"))
	if err != nil || len(blocks) != 1 || blocks[0].Marker != nil {
		t.Errorf("a marker separated from the fence by text must not count: %+v, %v", blocks, err)
	}
	if err := Check([]Block{{File: "p.md", Line: 1, Lang: "text", Marker: &Marker{Run: true}}}, nil); err == nil {
		t.Error("Check must refuse a marker on a non-HCL block")
	}
}
