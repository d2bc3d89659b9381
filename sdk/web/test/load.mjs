// load bundles one TypeScript module of src/ with esbuild and imports it, so that the unit
// tests run the sources under Node without a TypeScript loader.
import { build } from "esbuild";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const src = join(dirname(fileURLToPath(import.meta.url)), "..", "src");

export async function load(name) {
  const out = await build({ entryPoints: [join(src, name)], bundle: true, write: false, format: "esm", platform: "neutral", logLevel: "silent" });
  return import("data:text/javascript;base64," + Buffer.from(out.outputFiles[0].text).toString("base64"));
}
