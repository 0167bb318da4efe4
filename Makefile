# rackfence — see README.md. Targets: build test test-short chaos bench lint unused demo screenshot dist fuzz clean.
GO      ?= go
BIN     := bin
PKGS    := ./...
FUZZTIME ?= 5s

.PHONY: all build test test-short vet fmtcheck bench lint demo screenshot dist fuzz chaos clean unused

SEED     ?= 7
SEEDS    ?= 1
DURATION ?= 5m
FAULTS   ?= classic
ROTATION ?= false

all: build

# The version every binary prints with --version and sends in its
# User-Agent (internal/version): git describe of the checkout, and its commit.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X github.com/rackfence/rackfence/internal/version.Version=$(VERSION) \
           -X github.com/rackfence/rackfence/internal/version.Commit=$(COMMIT)

build:
	@mkdir -p $(BIN)
	@for d in $$(ls -d */cmd/* 2>/dev/null); do \
	  n=$$(basename $$d); echo "go build $$n $(VERSION)"; \
	  $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/$$n ./$$d || exit 1; done

fmtcheck:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

# test: formatting, vet, the race-enabled test suite (which builds the
# binaries the process-level tests start), then a short fuzz of each
# request decoder.
test: fmtcheck vet build
	RACKFENCE_BIN=$(CURDIR)/$(BIN) $(GO) test -race -count=1 -timeout 40m $(PKGS)
	@$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZTIME)

# test-short: the fast in-process layer alone (no real processes or peers,
# nothing that runs for seconds), in well under a minute.
test-short:
	$(GO) test -short -count=1 $(PKGS)

fuzz:
	@GO=$(GO) FUZZTIME=$(FUZZTIME) ./deploy/fuzz.sh

# chaos: the partition harness (testkit/chaos; root, iproute2 and
# nftables). Prints each run directory and the checkers' summary; exits 1
# on a violation. make chaos SEED=7 SEEDS=50 DURATION=5m is the campaign;
# FAULTS=storage|firmware|all picks other fault sets; ROTATION=true runs
# the agents with --bmc-account-rotation and checks the fence at the BMC.
chaos: build
	$(BIN)/rackfence-chaos --seed $(SEED) --seeds $(SEEDS) --duration $(DURATION) --faults $(FAULTS) --bmc-account-rotation=$(ROTATION) --bin $(CURDIR)/$(BIN)

bench: build
	RACKFENCE_BIN=$(CURDIR)/$(BIN) ./deploy/bench.sh

lint:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@2025.1.1 $(PKGS)

demo: build
	./deploy/demo/run.sh

# screenshot: the dashboard of a running coordinator as a signed-in user
# sees it, from headless chromium (Debian's package). The token is read from
# TOKEN_FILE and typed into the sign-in form (kept in the tab's
# sessionStorage), never put in a URL or on a command line.
#   make screenshot [URL=https://MEMBER:7480] [TOKEN_FILE=F] [OUT=dashboard.png] [HOST=r1-h01] [WIDTH=1440] [HEIGHT=900]
# URL and TOKEN_FILE default to $$RACKFENCE_COORDINATOR (its first member)
# and $$RACKFENCE_TOKEN_FILE; HOST opens that host's panel.
URL        ?= $(RACKFENCE_COORDINATOR)
TOKEN_FILE ?= $(RACKFENCE_TOKEN_FILE)
OUT        ?= dashboard.png
HOST       ?=
WIDTH      ?= 1440
HEIGHT     ?= 900
screenshot:
	@test -n "$(URL)" -a -n "$(TOKEN_FILE)" || { echo "make screenshot needs URL= and TOKEN_FILE= (or RACKFENCE_COORDINATOR and RACKFENCE_TOKEN_FILE)"; exit 2; }
	RACKFENCE_UI_DEMO_URL="$(URL)" RACKFENCE_UI_DEMO_TOKEN_FILE="$(TOKEN_FILE)" RACKFENCE_UI_DEMO_SHOT="$(abspath $(OUT))" \
	  RACKFENCE_UI_DEMO_HOST="$(HOST)" RACKFENCE_UI_DEMO_SIZE="$(WIDTH)x$(HEIGHT)" \
	  $(GO) test -count=1 -run TestDemoScreenshot -v ./coordinator/ui/

# dist: Debian packages rackfence-coordinator, rackfence-agent and
# rackfencectl in dist/ (dpkg-deb; see deploy/dist.sh). Install with
# sudo dpkg -i dist/*.deb.
dist:
	VERSION=$(VERSION) COMMIT=$(COMMIT) GO=$(GO) ./deploy/dist.sh

clean:
	rm -rf $(BIN) .demo dist

# unused: exported functions and methods nothing in the module refers to
# (testkit/unused; part of make test too, skipped by test-short).
unused:
	$(GO) test -count=1 -run 'TestNoUnusedExports|TestFindReportsUnused' ./testkit/unused
