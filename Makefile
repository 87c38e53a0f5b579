# k8sconnect developer entry points. Every target builds what it needs; binaries
# that take minutes (kube-apiserver, etcd, kwok, pulumi, tofu, helm) are built once and
# cached under $(K8SCONNECT_TOOLS_DIR) (default: the user cache dir).

SHELL   := bash
.SHELLFLAGS := -eu -o pipefail -c
GO      ?= go
# The release version: the VERSION file, which Go code embeds too (version.go).
# `make release VERSION=...` overrides it on the command line; the environment
# does not, so a stray VERSION variable cannot change what is built.
VERSION := $(shell cat $(CURDIR)/VERSION)
DEV     := $(GO) run ./internal/cmd/k8sconnect-dev
WORK    := $(CURDIR)/.work
TEST_TIMEOUT ?= 45m
# Without cgo, as releases are built (internal/release): every binary links
# statically with Go's own linker. With cgo, kustomize's import of Go's plugin
# package made every test binary and the provider link externally, through the
# system linker, at twice the CPU (13 CPU-seconds a link against 7).
CGO_ENABLED ?= 0
export CGO_ENABLED

.PHONY: all tools build release cluster-up cluster-down generate docs api-docs demo demo-down demo-down-pulumi test test-bridge test-terraform test-tofu test-provider test-unit lint bench

all: build

## tools: build the pinned toolchain (kube-apiserver, etcd, kwok, pulumi, tofu, helm 4 and 3) once
tools:
	$(DEV) tools

## build: terraform-provider-k8sconnect and pulumi-resource-k8sconnect into bin/
## (the bridge is its own Go module: see bridge/README.md)
build:
	$(GO) build -trimpath -ldflags "-X main.version=$(VERSION)" -o bin/ ./provider/cmd/terraform-provider-k8sconnect
	cd bridge && $(GO) build -trimpath -ldflags "-X main.version=$(VERSION)" -o ../bin/ ./cmd/pulumi-resource-k8sconnect

## release: a release's files in dist/: per platform (PLATFORMS=all, or host, or os/arch,...)
## the provider zip for the Terraform Registry (with SHA256SUMS and the manifest) and the
## Pulumi plugin archive; the npm package, the wheel and sdist, the jar. VERSION=... overrides
## the VERSION file; the SDKs in sdk/ must carry it (make generate). K8SCONNECT_GPG_KEY=<key>
## signs the SHA256SUMS; without it the release is unsigned.
PLATFORMS ?= all
release:
	rm -rf dist
	$(GO) run ./internal/cmd/k8sconnect-release -version $(VERSION) -platforms $(PLATFORMS) -out dist

## cluster-up: start the embedded cluster if it is not running; last line is KUBECONFIG=<path>
cluster-up:
	@$(DEV) cluster-up

## cluster-down: stop the embedded cluster
cluster-down:
	$(DEV) cluster-down

## bench: N ConfigMaps (default N=200,1000; `make bench N=200` for a quick one) through each of ENGINES
## (terraform,tofu,pulumi; also terraform_data, tofu_data and pulumi_data: the engine alone with no
## provider; terraform_provider_block, tofu_provider_block and pulumi_provider_block: the connection in
## the provider's configuration, not in each resource; pulumi_skip_checkpoints: the stack saved only at
## the end; terraform_kubernetes_backend and tofu_kubernetes_backend: the state in a Secret in the
## cluster, as CI keeps it, not in a local file; terraform_http_backend and tofu_http_backend: the state
## in an http backend that the bench serves on loopback) against kubectl on the embedded cluster: OPS
## (create, no-change plan, update, Pulumi's update with --skip-preview, destroy; e.g. OPS=create,plan;
## default: every operation of the workload). One table: seconds, ratio to kubectl, requests, provider
## CPU and peak RSS per object, the engine's state size; also in .work/bench/results.md. Under it, each
## configuration against the workload's targets (docs/performance.md), met or MISSED.
## WORKLOAD=bundle: instead of ConfigMaps, a vendor's bundle (internal/testing/bundles: ten CRDs of
## 50-830 KB, 73 objects, 4.2 MB of YAML) in its three steps, CRDs, cluster-scoped, namespaced (N does
## not apply); its OPS add update-crd, one field deep in its largest CRD. The _data engines measure
## ConfigMaps only. E.g. `make bench WORKLOAD=bundle ENGINES=terraform,terraform_http_backend,tofu,pulumi`.
## WORKLOAD=chart: a chart of N objects (default N=200: ConfigMaps, and five Deployments and Services)
## as a Helm release, one k8sconnect_helm_release per engine against the pinned helm CLI instead of
## kubectl (helm upgrade --install --server-side, upgrade --dry-run=server, upgrade, uninstall; no
## --wait on either side, the resource's wait = false): install, no-change plan, upgrade of the one
## value one object holds, uninstall, with the targets (1.5x helm, plan 1.0x its dry run, 150 MB RSS)
## under the table. E.g. `make bench WORKLOAD=chart ENGINES=terraform,tofu,pulumi`.
## A configuration with _set appended (any but _data; not for a chart): the ConfigMaps or the bundle as ONE
## k8sconnect_manifest_set whose path names a file the bench writes, against the same kubectl steps, with
## its time over the same configuration's for_each under the table when both ran. E.g. `make bench N=1000
## ENGINES=terraform_set,tofu_set,pulumi_set`, `make bench WORKLOAD=bundle ENGINES=terraform_set,tofu_set,pulumi_set`.
## PROFILE=1: the plugins write CPU profiles (.work/bench/profiles); prints their pprof top.
N        ?=
ENGINES  ?= terraform,tofu,pulumi
OPS      ?=
WORKLOAD ?= configmaps
PROFILE  ?=
bench: tools
	$(GO) run ./internal/cmd/k8sconnect-bench -workload $(WORKLOAD) $(if $(N),-n $(N)) -engines $(ENGINES) $(if $(OPS),-ops $(OPS)) $(if $(filter 1 true yes,$(PROFILE)),-profile)

## generate: schema/ and the SDKs in sdk/ from the provider (a test fails when they are stale)
generate:
	cd bridge && $(GO) run ./cmd/k8sconnect-sdkgen -version $(VERSION)

## docs: the Terraform/OpenTofu registry docs in docs/ from the schema, examples/ and templates/ (a test fails when stale)
docs:
	$(DEV) docs

## api-docs: browsable API docs of the TypeScript (TypeDoc), Python (pdoc) and Go (go doc)
## SDKs in .work/api-docs/ (open index.html); the tools, pinned in tools/api-docs, are
## installed into .work/api-docs-tools the first time
API_DOCS       := $(WORK)/api-docs
API_DOCS_TOOLS := $(WORK)/api-docs-tools
api-docs:
	@mkdir -p $(API_DOCS_TOOLS)/node
	@# Tools are reinstalled only when their pins change.
	@if ! cmp -s tools/api-docs/package-lock.json $(API_DOCS_TOOLS)/node/package-lock.json || \
		[ ! -d $(API_DOCS_TOOLS)/node/node_modules ]; then \
		cp tools/api-docs/package.json tools/api-docs/package-lock.json $(API_DOCS_TOOLS)/node/ && \
		(cd $(API_DOCS_TOOLS)/node && npm ci --no-audit --no-fund --silent); fi
	@if ! cmp -s tools/api-docs/requirements.txt $(API_DOCS_TOOLS)/requirements.txt; then \
		rm -rf $(API_DOCS_TOOLS)/venv && python3 -m venv $(API_DOCS_TOOLS)/venv && \
		$(API_DOCS_TOOLS)/venv/bin/pip install --quiet --disable-pip-version-check -r tools/api-docs/requirements.txt && \
		cp tools/api-docs/requirements.txt $(API_DOCS_TOOLS)/requirements.txt; fi
	@# TypeDoc compiles the Node SDK, so it needs the SDK's dependencies (as make demo does).
	@[ -d sdk/nodejs/node_modules/@pulumi/pulumi ] || (cd sdk/nodejs && npm ci --no-audit --no-fund --silent)
	@rm -rf $(API_DOCS) && mkdir -p $(API_DOCS)/go
	@echo "== TypeScript: $(API_DOCS)/typescript"
	@# Every module, not index.ts alone: index.ts re-exports the classes lazily,
	@# which TypeDoc would show as untyped variables.
	@cd sdk/nodejs && $(API_DOCS_TOOLS)/node/node_modules/.bin/typedoc --logLevel Warn \
		--tsconfig tsconfig.json --entryPointStrategy expand --entryPoints . \
		--exclude '**/node_modules/**' --exclude 'bin/**' --exclude 'utilities.ts' \
		--name @k8sconnect/k8sconnect --readme README.md --out $(API_DOCS)/typescript
	@echo "== Python: $(API_DOCS)/python"
	@# The SDK reads its own version from its installed metadata, so it is
	@# installed, from a copy (pip builds in the source tree), with the setuptools
	@# of the venv: no download on a warm run.
	@rm -rf $(API_DOCS_TOOLS)/python-sdk && cp -r sdk/python $(API_DOCS_TOOLS)/python-sdk && \
		$(API_DOCS_TOOLS)/venv/bin/pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation --force-reinstall \
		$(API_DOCS_TOOLS)/python-sdk
	@# pdoc cannot resolve the forward references of pulumi.Input; its warnings say only that.
	@PYTHONWARNINGS=ignore $(API_DOCS_TOOLS)/venv/bin/pdoc --docformat markdown -o $(API_DOCS)/python pulumi_k8sconnect
	@echo "== Go: $(API_DOCS)/go"
	@cd sdk/go && for pkg in k8sconnect k8sconnect/config; do \
		out=$(API_DOCS)/go/$$(echo $$pkg | tr / -).html; \
		{ echo "<!doctype html><meta charset=utf-8><title>$(GO_SDK_PATH)/$$pkg</title><pre>"; \
		  $(GO) doc -all ./$$pkg | sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g'; \
		  echo "</pre>"; } > $$out; done
	@{ echo '<!doctype html><meta charset=utf-8><title>k8sconnect SDK API docs</title><h1>k8sconnect SDK API docs</h1><ul>'; \
	  echo '<li><a href="typescript/index.html">TypeScript: @k8sconnect/k8sconnect</a> (TypeDoc)'; \
	  echo '<li><a href="python/index.html">Python: pulumi_k8sconnect</a> (pdoc)'; \
	  echo '<li><a href="go/k8sconnect.html">Go: $(GO_SDK_PATH)/k8sconnect</a>, <a href="go/k8sconnect-config.html">config</a> (go doc -all)'; \
	  echo '</ul>'; } > $(API_DOCS)/index.html
	@echo "Open $(API_DOCS)/index.html"
GO_SDK_PATH := github.com/k8sconnect/k8sconnect/sdk/go

## demo: the quickstart on the embedded cluster, with terraform and with a Pulumi program:
## Pulumi YAML, or the SDK=typescript|python|go|java quickstart (`make demo SDK=python`).
## Builds only what it needs; `make demo-down` removes what it made.
DEMO := $(WORK)/demo
SDK  ?= yaml
DEMO_PULUMI := PULUMI_HOME=$(DEMO)/pulumi-home PULUMI_BACKEND_URL=file://$(DEMO)/pulumi-state \
	PULUMI_CONFIG_PASSPHRASE=demo PULUMI_SKIP_UPDATE_CHECK=true PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
# The language host each SDK's program runs under, and what its program needs first.
DEMO_HOST_yaml       := yaml
DEMO_HOST_typescript := nodejs
DEMO_HOST_python     := python
DEMO_HOST_go         := go
DEMO_HOST_java       := java
DEMO_PREPARE_yaml       := true
DEMO_PREPARE_typescript := (cd sdk/nodejs && npm ci --no-audit --no-fund --silent && node_modules/.bin/tsc) && \
	(cd examples/pulumi-typescript && npm ci --no-audit --no-fund --silent)
DEMO_PREPARE_python     := (cd examples/pulumi-python && python3 -m venv .venv && .venv/bin/pip install --quiet -r requirements.txt) && \
	export VIRTUAL_ENV=$(CURDIR)/examples/pulumi-python/.venv PATH=$(CURDIR)/examples/pulumi-python/.venv/bin:$$PATH
DEMO_PREPARE_go         := true
DEMO_PREPARE_java       := export MAVEN_OPTS=-Dmaven.repo.local=$$(dirname $$(dirname "$$pulumi"))/maven-repository && \
	(cd sdk/java && mvn -B -q --no-transfer-progress install)
demo: build
	@test -n "$(DEMO_HOST_$(SDK))" || { echo "SDK=$(SDK): use yaml, typescript, python, go or java"; exit 2; }
	@mkdir -p $(DEMO)/pulumi-home $(DEMO)/pulumi-state $(DEMO)/terraform
	@kubeconfig=$$($(DEV) cluster-up | tail -n 1 | sed 's/^KUBECONFIG=//'); \
	pulumi=$$($(DEV) tools pulumi pulumi-language-$(DEMO_HOST_$(SDK)) | grep '^pulumi=' | sed 's/^pulumi=//'); \
	printf 'provider_installation {\n  dev_overrides {\n    "registry.terraform.io/k8sconnect/k8sconnect" = "%s"\n    "registry.opentofu.org/k8sconnect/k8sconnect" = "%s"\n  }\n  direct {}\n}\n' $(CURDIR)/bin $(CURDIR)/bin > $(DEMO)/terraformrc; \
	cp examples/terraform/quickstart/*.tf $(DEMO)/terraform/; \
	echo "== terraform apply (examples/terraform/quickstart)"; \
	TF_CLI_CONFIG_FILE=$(DEMO)/terraformrc CHECKPOINT_DISABLE=1 terraform -chdir=$(DEMO)/terraform apply \
		-auto-approve -input=false -compact-warnings -var kubeconfig_path=$$kubeconfig; \
	echo "== pulumi up (examples/pulumi-$(SDK))"; \
	export $(DEMO_PULUMI); \
	$(DEMO_PREPARE_$(SDK)); \
	"$$pulumi" plugin install resource k8sconnect $(VERSION) --file $(CURDIR)/bin/pulumi-resource-k8sconnect --reinstall >/dev/null; \
	echo $(SDK) > $(DEMO)/sdk; \
	cd examples/pulumi-$(SDK) && { "$$pulumi" stack select demo 2>/dev/null || "$$pulumi" stack init demo >/dev/null; } && \
	"$$pulumi" config set kubeconfigPath $$kubeconfig --config-file $(DEMO)/Pulumi.demo.yaml && \
	"$$pulumi" config set namespace k8sconnect-pulumi-$(SDK) --config-file $(DEMO)/Pulumi.demo.yaml && \
	"$$pulumi" up --yes --skip-preview --config-file $(DEMO)/Pulumi.demo.yaml && cd $(CURDIR) && \
	echo && echo "== what k8sconnect made" && \
	echo "  Terraform: namespace k8sconnect-quickstart, ConfigMap greeting; state $(DEMO)/terraform/terraform.tfstate" && \
	echo "  Pulumi ($(SDK)): namespace k8sconnect-pulumi-$(SDK), ConfigMap greeting; stack demo in $(DEMO)/pulumi-state" && \
	echo "  Look at them:" && \
	echo "    export KUBECONFIG=$$kubeconfig" && \
	echo "    kubectl get configmap greeting -n k8sconnect-quickstart -o yaml" && \
	echo "    kubectl get configmap greeting -n k8sconnect-pulumi-$(SDK) --show-managed-fields -o yaml" && \
	echo "  Remove them and stop the cluster: make demo-down"

## demo-down: destroy what `make demo` made and stop the embedded cluster
demo-down:
	@if [ -f $(DEMO)/terraform/terraform.tfstate ] && $(DEV) cluster-status >/dev/null 2>&1; then \
		kubeconfig=$$($(DEV) cluster-up | tail -n 1 | sed 's/^KUBECONFIG=//'); \
		TF_CLI_CONFIG_FILE=$(DEMO)/terraformrc CHECKPOINT_DISABLE=1 terraform -chdir=$(DEMO)/terraform destroy \
			-auto-approve -input=false -compact-warnings -var kubeconfig_path=$$kubeconfig; \
		sdk=$$(cat $(DEMO)/sdk 2>/dev/null || echo yaml); \
		$(MAKE) --no-print-directory demo-down-pulumi SDK=$$sdk; \
	fi
	@$(DEV) cluster-down
	@rm -rf $(DEMO)

# demo-down-pulumi destroys the Pulumi stack of `make demo SDK=...`.
demo-down-pulumi:
	@pulumi=$$($(DEV) tools pulumi pulumi-language-$(DEMO_HOST_$(SDK)) | grep '^pulumi=' | sed 's/^pulumi=//'); \
	export $(DEMO_PULUMI); \
	$(DEMO_PREPARE_$(SDK)); \
	cd examples/pulumi-$(SDK) && "$$pulumi" destroy --yes --stack demo --config-file $(DEMO)/Pulumi.demo.yaml

# The bridge's tests spend most of their time waiting for the Pulumi engine, its language
# hosts and the API server: four at once keep more of the CPU busy (warm, alone: 16 min at
# the default of two, 10.5 min at four).
BRIDGE_PARALLEL ?= 4

## test: everything CI runs but the linters (make lint, which runs go vet's checks too):
## three suites at once, each with its own clusters: the bridge's tests (test-bridge), the
## root module's tests under terraform (test-terraform), and its acceptance tests again
## under tofu (test-tofu). Each suite's output is shown when it ends. The toolchain is built
## first. -count=1: the Go test cache cannot see the cluster, so a cached pass would be a
## test that did not run
test:
	$(DEV) tools
	$(MAKE) --no-print-directory -j3 --output-sync=target test-bridge test-terraform test-tofu

# One suite alone leaves a quarter of the CPU idle or more, waiting for the engines and the API
# server, and the longest package of each is the last few minutes of it; three at once
# keep both cores busy (see docs/contributing.md#ci).
# TEST_VET: go test's own vet checks, a subset of go vet's, which make lint runs in full
# (golangci-lint's govet), so the suites pass -vet=off (in a cold run, go test's vet took
# 2.5 CPU-minutes, and a separate go vet of both modules 2.5 more).
TEST_VET ?= -vet=off
# The provider binary the CLI-driven tests install through dev_overrides, built once for
# both suites (acctest.providerBinary) rather than once per test binary: 20 links.
TEST_PROVIDER := $(WORK)/test-provider
test-provider:
	$(GO) build -o $(TEST_PROVIDER)/ ./provider/cmd/terraform-provider-k8sconnect
test-bridge:
	cd bridge && $(GO) test -count=1 $(TEST_VET) -parallel $(BRIDGE_PARALLEL) -timeout $(TEST_TIMEOUT) ./...
test-terraform: test-provider
	K8SCONNECT_TEST_PROVIDER_DIR=$(TEST_PROVIDER) $(GO) test -count=1 $(TEST_VET) -timeout $(TEST_TIMEOUT) ./...
# test-tofu's packages: those of provider/ that have acceptance tests (the others would
# link a test binary only to run none of it), and four of internal/testing.
TOFU_PACKAGES := $(addprefix ./,$(sort $(dir $(shell grep -rl --include='*_test.go' '^func TestAcc' provider)))) \
	./internal/testing/badinput/ ./internal/testing/exacttest/ ./internal/testing/doctest/ ./internal/testing/timeouts/
test-tofu: test-provider
	K8SCONNECT_ENGINE=tofu K8SCONNECT_TEST_PROVIDER_DIR=$(TEST_PROVIDER) $(GO) test -count=1 $(TEST_VET) -timeout $(TEST_TIMEOUT) -run 'TestAcc' $(TOFU_PACKAGES)

## lint: golangci-lint (pinned in tools/golangci-lint, configured by .golangci.yml) and a
## go mod tidy check, in both modules. LINT_TIMEOUT overrides the configuration's timeout
## (0: none), for CI, which lints at the lowest CPU priority beside the tests.
LINT_TIMEOUT ?=
LINT := $(GO) tool -modfile=$(CURDIR)/tools/golangci-lint/go.mod golangci-lint run --config $(CURDIR)/.golangci.yml \
	$(if $(LINT_TIMEOUT),--timeout=$(LINT_TIMEOUT))
lint:
	$(LINT) ./...
	cd bridge && $(LINT) ./...
	$(GO) mod tidy -diff
	cd bridge && $(GO) mod tidy -diff

## test-unit: the tests that need no cluster (-short), in both modules; under a minute with a warm build cache
test-unit:
	$(GO) test -short -count=1 ./...
	cd bridge && $(GO) test -short -count=1 ./...
