// Builds the web SDK: dist/idstream.mjs (ES module), dist/idstream.umd.js (UMD: AMD,
// CommonJS or the global IdStream), dist/idstream.css and the type declarations; and writes
// what the edge serves (the UMD bundle, the styles, and the hosted page's script capture.js
// from src/page.ts) to edge/pages/assets, embedded in the Go binary.
// `node build.mjs --check` builds in memory and fails if the embedded copies are stale.
import { build, transform } from "esbuild";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const embedded = join(here, "..", "..", "edge", "pages", "assets");
const check = process.argv.includes("--check");

const common = {
  entryPoints: [join(here, "src", "index.ts")],
  bundle: true,
  write: false,
  target: "es2020",
  legalComments: "none",
  minify: true, // what browsers load; the sources are in src/
  charset: "utf8",
  logLevel: "warning",
};

const esm = await build({ ...common, format: "esm" });
const umd = await build({
  ...common,
  format: "iife",
  globalName: "__idstream",
  banner: {
    js: '(function (root, factory) {\n  if (typeof define === "function" && define.amd) define([], factory);\n  else if (typeof module === "object" && module.exports) module.exports = factory();\n  else root.IdStream = factory();\n})(typeof self !== "undefined" ? self : this, function () {',
  },
  footer: { js: "return __idstream;\n});" },
});

const page = await build({ ...common, entryPoints: [join(here, "src", "page.ts")], format: "iife" });
const backoffice = await build({ ...common, entryPoints: [join(here, "src", "backoffice.ts")], format: "iife" });

// The edge serves the UMD bundle, the styles, the capture page's script and the reviewers'
// back office; the ES module is for npm.
const served = ["idstream.umd.js", "idstream.css", "capture.js", "backoffice.js", "backoffice.css"];

const outputs = {
  "capture.js": page.outputFiles[0].text,
  "backoffice.js": backoffice.outputFiles[0].text,
  "backoffice.css": (await transform(readFileSync(join(here, "src", "backoffice.css"), "utf8"), { loader: "css", minify: true })).code,
  "idstream.mjs": esm.outputFiles[0].text,
  "idstream.umd.js": umd.outputFiles[0].text,
  "idstream.css": (await transform(readFileSync(join(here, "src", "idstream.css"), "utf8"), { loader: "css", minify: true })).code,
};

if (check) {
  const stale = Object.entries(outputs).filter(([name]) => served.includes(name)).filter(([name, text]) => {
    try {
      return readFileSync(join(embedded, name), "utf8") !== text;
    } catch {
      return true;
    }
  });
  if (stale.length) {
    console.error(`stale: ${stale.map(([n]) => "edge/pages/assets/" + n).join(", ")}; run make sdk and commit them`);
    process.exit(1);
  }
  console.log("sdk: the edge's embedded bundles match the sources");
} else {
  mkdirSync(join(here, "dist"), { recursive: true });
  mkdirSync(embedded, { recursive: true });
  for (const [name, text] of Object.entries(outputs)) {
    if (!["capture.js", "backoffice.js", "backoffice.css"].includes(name)) writeFileSync(join(here, "dist", name), text);
    if (served.includes(name)) writeFileSync(join(embedded, name), text);
  }
  execFileSync(join(here, "node_modules", ".bin", "tsc"), ["-p", here], { stdio: "inherit" });
  console.log("sdk: built dist/ and edge/pages/assets/");
}
