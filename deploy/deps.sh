#!/usr/bin/env bash
# Installs what idstream needs on Debian 12 and is idempotent: a second run installs nothing.
# Debian packages (PLATFORM.md): OpenCV and Tesseract for the vision steps, ClickHouse for the
# sinks, openjpeg for chip photos, libjpeg-turbo for decoding uploads (internal/libjpeg),
# fonts for generated test documents (cardrender; docgen's evaluation corpus draws its two
# halves with disjoint families: DejaVu, Liberation, FreeFont, Noto), kcat as a second Kafka
# client. Uses sudo when not root. Set IDSTREAM_SKIP_APT=1 to skip the system packages.
set -euo pipefail

packages=(
  pkg-config
  libopencv-dev opencv-data
  libtesseract-dev libleptonica-dev tesseract-ocr-eng tesseract-ocr-vie tesseract-ocr-script-viet
  clickhouse-server clickhouse-client
  libopenjp2-tools libjpeg62-turbo-dev
  fonts-dejavu-core fonts-ocr-b
  fonts-liberation2 fonts-freefont-ttf fonts-noto-core
  kcat unzip curl
)

# The test tools' system packages (not for make run): Debian's Chromium for the hosted
# capture page's browser test, and Node.js with npm for the web SDK (sdk/web) where the
# machine has none.
if [ "${IDSTREAM_SKIP_TEST_TOOLS:-}" != "1" ]; then
  packages+=(chromium)
  if ! command -v npm >/dev/null 2>&1; then packages+=(nodejs npm); fi
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${IDSTREAM_SKIP_APT:-}" != "1" ] && [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "deps: system packages present"
fi

if ! command -v go >/dev/null 2>&1; then
  echo "deps: Go 1.26 is required (https://go.dev/dl/); it is not installed" >&2
  exit 1
fi

# Go modules, so that the build and the tests do not fetch while they run.
go mod download

# The test tools, built from their pinned Go modules where go install puts them: GOBIN, or
# the first GOPATH entry's bin (not for make run: IDSTREAM_SKIP_TEST_TOOLS=1).
bindir=$(go env GOBIN)
if [ -z "$bindir" ]; then bindir="$(go env GOPATH | cut -d: -f1)/bin"; fi
if [ "${IDSTREAM_SKIP_TEST_TOOLS:-}" != "1" ]; then
  # An S3-compatible server for the S3 blob store's tests: versitygw (Apache-2.0), a real S3
  # gateway over a directory.
  versitygw_version=v1.8.0
  if [ ! -x "$bindir/versitygw" ]; then
    echo "deps: building versitygw $versitygw_version"
    go install "github.com/versity/versitygw/cmd/versitygw@$versitygw_version"
  fi

  # The web SDK's build tools (TypeScript, esbuild), pinned by sdk/web/package-lock.json.
  if [ ! -d "$(dirname "$0")/../sdk/web/node_modules" ]; then
    echo "deps: npm ci in sdk/web"
    (cd "$(dirname "$0")/../sdk/web" && npm ci --no-audit --no-fund)
  fi

  # helm, for the chart's tests (helm lint and helm template of deploy/helm/idstream).
  helm_version=v3.22.0
  if [ ! -x "$bindir/helm" ]; then
    echo "deps: building helm $helm_version"
    go install "helm.sh/helm/v3/cmd/helm@$helm_version"
  fi
fi

# Model files for the vision steps (face detection, embedding, liveness; OCR-B for MRZs).
"$(dirname "$0")/models.sh"
