# Folio — every task a person runs. `make help` lists them.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

NODE_DIR := $(CURDIR)/.tools/node
export PATH := $(NODE_DIR)/bin:$(CURDIR)/node_modules/.bin:$(PATH)
SETUP_STAMP := node_modules/.folio-setup
SOURCES := $(shell find core runner api controller bin -name '*.ts' 2>/dev/null) $(wildcard api/dashboard/assets/*)

.PHONY: help setup build docs images images-full run test lint format typecheck unit test-corpus bench-runner bench-api crds k8s-platform k8s-up k8s-smoke chart-tools chart-test s3-server s3-up test-s3 e2e test-platform bench-k8s bench-convert dashboard-screenshots bench-fuzz-parser bench-fuzz bench-newops bench-edge clean

help: ## List the tasks
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(SETUP_STAMP): package-lock.json .node-version bin/setup bin/debian-packages.txt
	bin/setup

setup: ## Install Node 24, Debian packages (qpdf, LibreOffice, poppler) and npm dependencies
	bin/setup

# Only the compiled code is replaced: dist/images (make images) stays.
dist/bin/folio.js: $(SETUP_STAMP) $(SOURCES) tsconfig.json tsconfig.build.json
	rm -rf dist/api dist/bin dist/controller dist/core dist/runner && tsc -p tsconfig.build.json && cp -r api/dashboard/assets dist/api/dashboard/ && touch $@

build: dist/bin/folio.js ## Compile TypeScript into dist/ (then ./bin/folio works)

images: $(SETUP_STAMP) ## Build the images of docker/images.txt with buildah, no Docker or registry: dist/images/*.oci.tar (cached by content)
	docker/build-images.sh

images-full: images ## Also build the full runner image of docker/images-full.txt (Chromium, OCRmyPDF, veraPDF; ADR 0015)
	docker/build-images.sh docker/images-full.txt

run: build ## Start Folio, embedded mode (HTTPS API + runner pool)
	./bin/folio serve

typecheck: $(SETUP_STAMP) ## Type-check everything, tests included
	tsc -p tsconfig.json --noEmit

lint: $(SETUP_STAMP) ## Prettier (formatting) and ESLint: floating promises, complexity, import cycles, layering
	prettier --check --log-level warn "**/*.{ts,js,json}"
	eslint .

format: $(SETUP_STAMP) ## Format the sources with Prettier (make lint checks it)
	prettier --write --log-level warn "**/*.{ts,js,json}"

unit: build ## Run the test suite only (no lint)
	vitest run

# A test that fails gets one retry; test/summary.ts names every test that needed it ("flaky") at the
# end of the log, beside the failed ones, so a flake is seen and fixed, not hidden.
test: build typecheck lint test-platform images images-full ## The whole suite: type-check, lint, every test on real engines, e2e on the local control plane, the chart
	status=0; \
	FOLIO_S3_REQUIRED=1 vitest run --retry=1 --reporter=default --reporter=json --outputFile.json=dist/test-results.json || status=$$?; \
	vitest run --retry=1 --config vitest.e2e.config.ts --reporter=default --reporter=json --outputFile.json=dist/e2e-results.json || status=$$?; \
	test/chart/run.sh || status=$$?; \
	node test/summary.ts dist/test-results.json dist/e2e-results.json; exit $$status

test-platform: k8s-platform s3-server chart-tools ## Build (or reuse) what the suites run on: control plane, MinIO, helm/promtool/hadolint (~25 min cold)

docs: $(SETUP_STAMP) ## Generate docs/configuration.md from core/config.ts (a test fails when it is stale)
	node --input-type=module -e 'import { renderConfigDocs } from "./core/config-docs.ts"; process.stdout.write(renderConfigDocs());' > docs/configuration.md

crds: $(SETUP_STAMP) ## Generate crds/*.folio.dev.yaml (PdfJob, Tenant, AccessRequest) from the zod schemas (a test fails when one is stale)
	node controller/gen-crd.ts
	cp crds/*.folio.dev.yaml helm/folio/crds/

bench-runner: build ## Benchmark the runner against raw qpdf, Ghostscript, cold LibreOffice/Chromium and ocrmypdf (bench/runner.ts lists the parts)
	node bench/runner.ts

bench-newops: build ## Benchmark issue #15's operations only: edit vs qpdf, HTML → PDF, OCR vs ocrmypdf, PDF/A validation
	node bench/runner.ts edit html ocr pdfa

bench-api: build ## Benchmark the API: GET job throughput/latency, merges end to end, RSS during a 1 GB upload
	node bench/api.ts

k8s-platform: ## Build (or reuse) etcd, kube-apiserver, kube-controller-manager pinned in test/k8s/versions.env (~11 min cold)
	test/k8s/build.sh

k8s-up: k8s-platform $(SETUP_STAMP) images ## Run the local control plane + kubelet until Ctrl-C (prints KUBECONFIG)
	node test/k8s/start.ts

k8s-smoke: k8s-platform $(SETUP_STAMP) images ## Smoke-check the control plane + local kubelet (Job complete, podFailurePolicy, deadline, PodSecurity)
	node test/k8s/smoke.ts

s3-server: ## Build (or reuse) the MinIO S3 test server pinned in test/s3/build.sh (~7 min cold)
	test/s3/build.sh

s3-up: s3-server $(SETUP_STAMP) ## Run MinIO on a free loopback port until Ctrl-C (prints its FOLIO_S3_*/AWS_* env)
	node test/s3/server.ts

test-s3: s3-server $(SETUP_STAMP) ## S3 store and runner-pod suites on the real S3 server (fails if it is missing)
	FOLIO_S3_REQUIRED=1 vitest run test/storage test/runner/pod.test.ts

e2e: k8s-platform s3-server $(SETUP_STAMP) images ## End to end: the public API, the controller, runner pods on the local control plane + kubelet + MinIO
	vitest run --config vitest.e2e.config.ts

bench-k8s: k8s-platform s3-server $(SETUP_STAMP) images ## Benchmark the operator (PdfJob → Succeeded overhead, 500-PdfJob backlog) and the stateless API (apiserver requests per request, throughput with 1 and 3 replicas, 200 waiters, memory with 50,000 PdfJobs; 300 jobs through replica kills; fairness behind 1,000 queued)
	node bench/k8s.ts
	node bench/k8s-stateless.ts
	FOLIO_E2E_STATELESS_JOBS=300 FOLIO_E2E_FAIRNESS_BACKLOG=1000 vitest run --config vitest.e2e.config.ts test/e2e/stateless-api.e2e.ts test/e2e/fairness.e2e.ts

dashboard-screenshots: build ## Run the dashboard's browser tests and save their screenshots into docs/screenshots
	FOLIO_SCREENSHOTS=docs vitest run test/dashboard/tenant.test.ts test/dashboard/operator.test.ts

bench-convert: build ## Benchmark PDF → DOCX/XLSX against pdf2docx and a table extractor (throwaway Python venv), and on other projects' truth
	node bench/pdf-to-office.ts
	node bench/external-truth.ts

bench-edge: $(SETUP_STAMP) ## One tenant's job latency alone and under 2,000 idle sockets + 50 slow uploads (IDLE=, SLOW=, ROUNDS=)
	node bench/edge.ts $(or $(IDLE),2000) $(or $(SLOW),50) $(or $(ROUNDS),3)

bench-fuzz: $(SETUP_STAMP) ## Fuzz the API with schemathesis (throwaway venv in ~/.cache/folio-fuzz): every check, 20 min (SECONDS=, SEED=)
	node bench/fuzz-api.ts $(or $(SECONDS),1200) $(SEED)

test-corpus: $(SETUP_STAMP) ## Every file of qpdf's 625-file corpus through every PDF operation (make test takes a quarter per operation; ~15 min)
	FOLIO_CORPUS=all vitest run test/runner/corpus.test.ts

bench-fuzz-parser: $(SETUP_STAMP) ## Fuzz the runner's own parsers on the mutated qpdf corpus (20,000 inputs per target, random seed; RUNS=, SEED=)
	node bench/fuzz-parser.ts $(or $(RUNS),20000) $(SEED)

chart-tools: ## Install the chart test's pinned tools (helm, promtool, hadolint) into ~/.cache/folio-tools
	test/chart/tools.sh >/dev/null

chart-test: $(SETUP_STAMP) images ## Helm chart, Dockerfiles, alerts: lint, render, validate; install/upgrade/uninstall on the local control plane
	test/chart/run.sh

clean: ## Remove build output (keeps .tools and node_modules)
	rm -rf dist
