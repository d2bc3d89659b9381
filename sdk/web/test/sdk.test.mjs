import assert from "node:assert/strict";
import { test } from "node:test";
import { load } from "./load.mjs";

const i18n = await load("i18n.ts");
const camera = await load("camera.ts");
const api = await load("api.ts");

test("every text exists in both locales, with the same placeholders", () => {
  const en = i18n.catalogues.en;
  const vi = i18n.catalogues.vi;
  assert.deepEqual(Object.keys(vi).sort(), Object.keys(en).sort());
  for (const k of Object.keys(en)) {
    const holes = (s) => (s.match(/\{\w+\}/g) ?? []).sort().join();
    assert.equal(holes(vi[k]), holes(en[k]), k);
    assert.notEqual(vi[k].trim(), "", k);
  }
});

test("every quality gate reason and API error code has its own text", () => {
  for (const r of ["blurry", "glare", "not_framed", "too_dark", "no_document", "no_face", "multiple_faces", "face_too_small"]) {
    assert.equal(i18n.reasonKey(r), `reason.${r}`);
  }
  assert.equal(i18n.reasonKey("something_new"), "reason.other");
  for (const c of ["session_expired", "session_closed", "invalid_image", "payload_too_large", "unauthorized", "rate_limited", "overloaded"]) {
    assert.equal(i18n.errorKey(c), `error.${c}`);
  }
  assert.equal(i18n.errorKey("toString"), "error.other");
});

test("locale: requested, then the browser's, then Vietnamese", () => {
  assert.equal(i18n.pickLocale("en"), "en");
  assert.equal(i18n.pickLocale("fr", ["en-GB"]), "en");
  assert.equal(i18n.pickLocale(undefined, ["vi-VN", "en"]), "vi");
  assert.equal(i18n.pickLocale(undefined, ["de"]), "vi");
  assert.equal(i18n.translator("en")("progress", { n: 2, total: 3 }), "Step 2 of 3");
});

function frame(w, h, f) {
  const a = new Uint8ClampedArray(w * h * 4);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
    const v = f(x, y);
    a.set([v, v, v, 255], 4 * (y * w + x));
  }
  return a;
}

test("on-device hint: dark, bright, blurred and sharp frames", () => {
  const w = 480, h = 300;
  const hint = (f, kind = "document") => camera.hintFor(camera.grayStats(frame(w, h, f), w, h), kind);
  assert.equal(hint(() => 20), "dark");
  assert.equal(hint(() => 252), "bright");
  assert.equal(hint((x, y) => ((x >> 2) + (y >> 2)) % 4 ? 245 : 40), "ok"); // a white card is not overexposed
  assert.equal(hint((x, y) => (y % 40 < 3 && x % 9 < 5) ? 30 : 255), "ok"); // nor one whose white zone fills most of it
  assert.equal(hint((x) => 100 + Math.round(20 * Math.sin(x / 40))), "blurry"); // smooth shading
  assert.equal(hint((x, y) => ((x >> 2) + (y >> 2)) % 2 ? 200 : 60), "ok"); // print-like edges
  const soft = (x, y) => 120 + Math.round(30 * Math.sin(x / 2) * Math.cos(y / 2)); // a face's softer edges
  assert.equal(hint(soft, "selfie"), "ok");
  assert.equal(hint(soft, "document"), "blurry");
});

test("virtual cameras are told by their label; ordinary cameras are not", () => {
  for (const l of ["OBS Virtual Camera", "ManyCam Virtual Webcam", "Snap Camera", "DroidCam Source 3"]) assert.ok(camera.isVirtualCamera(l), l);
  for (const l of ["FaceTime HD Camera", "Integrated Webcam (0bda:58f4)", "camera2 1, facing front", "fake_device_0"]) assert.ok(!camera.isVirtualCamera(l), l);
});

test("steps are taken in the flow's order, unknown ones dropped", () => {
  assert.deepEqual(api.orderSteps(["selfie", "document_back", "nfc", "document_front", "x"]), ["document_front", "document_back", "nfc", "selfie"]);
  assert.equal(api.sideOf("passport"), "passport");
  assert.equal(api.sideOf("selfie"), "");
});
