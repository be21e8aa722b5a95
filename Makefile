# pgranger — see README.md.
#   make demo   throwaway PostgreSQL + sample data + pgranger on 127.0.0.1:6432
#               (PORT=… ADMIN_PORT=… for other ports)
#   make test   what CI runs: formatting, vet, unit and end-to-end tests, a short fuzz run
#   make bench  performance against direct PostgreSQL and pgbouncer
#   make bench-tpch  TPC-H through pgranger against physical filtered-and-masked copies
#   make interop-deps  build the Ranger, Hive and Spark oracles the tests compare against (interop/) and fetch Keycloak
#   make interop  the suites against those real systems, then the long differentials: decisions
#                 against Ranger 2.6.0 and 2.9.0, masks against Hive's UDFs; random seed
#                 (printed; SEED=… to reproduce, BUNDLES=… and MASK_VALUES=… for other sizes)

GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: all build deps interop-deps interop demo test vet staticcheck fmt-check unit e2e fuzz bench bench-tpch gobench clean

all: build

deps:
	@scripts/ensure-deps.sh

# The JVM oracles of internal/interop: Maven offline when ~/.m2 is warm
# (docs/testing.md, "The reference oracles").
interop-deps:
	@scripts/interop-deps.sh

# make interop: the suites that compare pgranger with the real systems
# (docs/testing.md, "The reference oracles": Ranger's engine and Hive's
# UDFs, Spark with Ranger's plugin over the same tables, Keycloak), then
# the decision differential (internal/interop/diffgen) over BUNDLES
# bundles of 50 requests each with a random seed, against Ranger 2.6.0
# and then 2.9.0 (docs/testing.md, "The decision differential"), and
# the mask differential (internal/interop/maskdiff) over MASK_VALUES values
# and every code point with the same seed (docs/testing.md, "The mask
# differential").
SEED        ?= random
BUNDLES     ?= 4000
MASK_VALUES ?= 100000
interop: deps interop-deps
	@GO=$(GO) scripts/test.sh ./internal/interop ./policy/policytest ./internal/testkeycloak
	@GO=$(GO) scripts/test.sh -run 'TestSparkParity|TestKeycloak|TestCompose' ./e2e
	@INTEROP_RANGER_VERSIONS="2.6.0 2.9.0" scripts/interop-deps.sh
	@seed=$(SEED); if [ "$$seed" = random ]; then seed=$$(od -An -N6 -tu8 /dev/urandom | tr -d ' '); fi; \
	echo "==> decision differential, seed $$seed, $(BUNDLES) bundles (make interop SEED=$$seed reproduces)"; \
	for v in 2.6.0 2.9.0; do \
		INTEROP_RANGER_VERSION=$$v PGRANGERTEST_DIFF_SEED=$$seed PGRANGERTEST_DIFF_BUNDLES=$(BUNDLES) \
			$(GO) test -count=1 -timeout 60m -run 'TestDecisionDifferential' -v ./internal/interop/diffgen || exit 1; \
	done; \
	echo "==> mask differential, seed $$seed, $(MASK_VALUES) values and every code point (make interop SEED=$$seed reproduces)"; \
	PGRANGERTEST_MASK_SEED=$$seed PGRANGERTEST_MASK_VALUES=$(MASK_VALUES) PGRANGERTEST_MASK_ALL_CODEPOINTS=1 \
		$(GO) test -count=1 -timeout 60m -run 'TestMaskDifferential|TestEveryCodePoint' -v ./internal/interop/maskdiff

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/pgranger ./cmd/proxy

# make demo PORT=6433 ADMIN_PORT=9433: other ports (ADMIN_PORT=0 picks a
# free one). Silent builds, so the first line of output is the demo's own.
PORT       ?= 6432
ADMIN_PORT ?= 9432
demo: deps
	@$(GO) build -ldflags "$(LDFLAGS)" -o bin/pgranger ./cmd/proxy
	@$(GO) build -o bin/pgranger-demo ./cmd/demo
	@bin/pgranger-demo -pgranger bin/pgranger -config examples/pgranger.toml \
		-listen 127.0.0.1:$(PORT) -admin 127.0.0.1:$(ADMIN_PORT)

fmt-check:
	@echo "==> gofmt"
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	@echo "==> go vet ./..."
	@$(GO) vet ./...

# staticcheck, pinned, from the Go module proxy (built once into Go's cache).
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
staticcheck:
	@echo "==> staticcheck ./..."
	@$(GO) run $(STATICCHECK) ./...

unit:
	@GO=$(GO) scripts/test.sh $$($(GO) list ./... | grep -v /e2e)

e2e:
	@GO=$(GO) scripts/test.sh ./e2e/...

fuzz:
	@GO=$(GO) scripts/fuzz.sh

# make test: one line per package as it finishes, the output of failing
# tests, then every skipped test and why (scripts/test.sh). With CI=true a
# skipped conformance suite (../shared/ranger absent) fails the run. Then
# FuzzDeepNesting for FUZZTIME (default 30s; scripts/fuzz.sh).
test: deps interop-deps fmt-check vet staticcheck build
	@echo "==> go test ./... (a line per package as it finishes)"
	@GO=$(GO) scripts/test.sh ./...
	@echo "==> fuzz: statements nested deeply ($${FUZZTIME:-30s})"
	@GO=$(GO) scripts/fuzz.sh

# make bench: pgbench direct / pgbouncer / pgranger, interleaved, medians
# and ratios (docs/performance.md); BENCH_FLAGS="-duration 5s -repeat 1" for a quick look.
bench: build
	@scripts/ensure-deps.sh bench
	$(GO) run ./bench $(BENCH_FLAGS)
	$(MAKE) gobench

# make bench-tpch: the 22 TPC-H queries through pgranger and directly on
# physical copies of what the governed user may read, per-query medians and
# ratios (docs/performance.md, "TPC-H"); TPCH_FLAGS="-tpch-scale 0.2 -tpch-runs 5".
bench-tpch: deps build
	$(GO) run ./bench -tpch $(TPCH_FLAGS)

gobench:
	$(GO) test -run '^$$' -bench . -benchmem ./sqlrewrite ./policy ./pgwire

clean:
	rm -rf bin
