// idstream web SDK: IdStream.start mounts the capture UI of one verification session in an
// element and drives the session's steps (API.md, Verification interface) with its
// sdk_token: camera capture with on-device guidance, upload, the quality gate's answer as
// the person's next action, retakes, the chip hand-off to a phone, and the final state.
// No framework; the UI is plain DOM with the stylesheet idstream.css.

import { Client, IdStreamError, orderSteps, type CaptureResult, type SessionStatus } from "./api";
import { cameraAvailable, captureSignals, hintFor, measure, openCamera, takePhoto, type Camera } from "./camera";
import { button, h, replace } from "./dom";
import { errorKey, pickLocale, reasonKey, translator, type Locale, type TextKey, type Translator } from "./i18n";

export { IdStreamError } from "./api";
export type { CaptureResult, Handoff, Quality, SessionStatus, StepStatus } from "./api";
export type { Locale } from "./i18n";

/** What start is given. sdkToken and sessionId come from Session Init (via your backend). */
export interface StartOptions {
  /** The session's sdk_token. */
  sdkToken: string;
  /** The session's id (ses_...). */
  sessionId: string;
  /** Where the UI is mounted: an element or a CSS selector. */
  container: HTMLElement | string;
  /**
   * The edge's base URL, without /v1 (default: this page's origin). Point it at your own
   * backend to proxy the calls (the proxy integration model).
   */
  baseUrl?: string;
  /** "vi" or "en" (default: the browser's language, else Vietnamese). */
  locale?: string;
  /** The flow's steps from Session Init (default: read from the session). */
  steps?: string[];
  /** The session nonce from Session Init, echoed with each capture to bind it to the session. */
  nonce?: string;
  /** Called when a step starts, is accepted or is sent back. */
  onStep?: (e: StepEvent) => void;
  /** Called once the session is decided (verified or rejected) or ends (expired, cancelled). */
  onComplete?: (e: CompleteEvent) => void;
  /** Called on every error shown to the person. */
  onError?: (e: IdStreamError) => void;
}

export interface StepEvent {
  step: string;
  index: number;
  total: number;
  status: "started" | "accepted" | "retake" | "pending";
  reasons?: string[];
}

export interface CompleteEvent {
  sessionId: string;
  status: string;
}

/** Controller is a mounted UI. */
export interface Controller {
  /** destroy stops the camera and the polling and removes the UI. */
  destroy(): void;
}

const maxImageBytes = 10 * 1024 * 1024;
const finalStatuses = ["verified", "rejected", "expired", "cancelled"];
/** Problems the person cannot fix here: the UI ends on them. */
const fatalCodes = ["session_expired", "session_closed", "unauthorized", "session_not_found", "not_found", "forbidden"];
/** Problems that pass: the call is tried again after a wait. */
const transientCodes = ["network", "rate_limited", "overloaded", "unavailable", "not_ready", "internal"];

function isFatal(e: unknown): boolean {
  return e instanceof IdStreamError && fatalCodes.includes(e.code);
}

/** start mounts the capture UI and returns its controller. */
export function start(opts: StartOptions): Controller {
  if (!opts || !opts.sdkToken || !opts.sessionId) throw new TypeError("IdStream.start: sdkToken and sessionId are required");
  const host = typeof opts.container === "string" ? document.querySelector<HTMLElement>(opts.container) : opts.container;
  if (!host) throw new TypeError("IdStream.start: container not found");
  const flow = new Flow(host, opts);
  void flow.run();
  return { destroy: () => flow.destroy() };
}

class Flow {
  private readonly t: Translator;
  private readonly locale: Locale;
  private readonly client: Client;
  private readonly root: HTMLElement;
  private readonly heading: HTMLElement;
  private readonly progress: HTMLElement;
  private readonly bar: HTMLElement;
  private readonly body: HTMLElement;
  private readonly live: HTMLElement;
  private steps: string[] = [];
  /** steps accepted here: the session's view may answer before it shows them */
  private readonly accepted = new Set<string>();
  private camera: Camera | null = null;
  private timers = new Set<number>();
  private destroyed = false;
  private readonly abort = new AbortController();

  constructor(
    host: HTMLElement,
    private readonly opts: StartOptions,
  ) {
    this.locale = pickLocale(opts.locale, typeof navigator !== "undefined" ? navigator.languages : []);
    this.t = translator(this.locale);
    const base = opts.baseUrl ?? window.location.origin;
    this.client = new Client(base, opts.sessionId, opts.sdkToken, this.abort.signal);
    this.heading = h("h2", { class: "ids-heading", tabindex: "-1" });
    this.progress = h("p", { class: "ids-progress" });
    this.bar = h("div", { class: "ids-bar", role: "progressbar", "aria-valuemin": "0" }, h("div", { class: "ids-bar-fill" }));
    this.body = h("div", { class: "ids-body" });
    this.live = h("p", { class: "ids-status", role: "status", "aria-live": "polite" });
    this.root = h(
      "section",
      { class: "ids-root", lang: this.locale, "aria-label": this.t("title"), "data-state": "starting" },
      h("h1", { class: "ids-title" }, this.t("title")),
      this.progress,
      this.bar,
      this.heading,
      this.body,
      this.live,
    );
    host.replaceChildren(this.root);
  }

  destroy(): void {
    this.destroyed = true;
    this.abort.abort();
    this.stopCamera();
    for (const id of this.timers) window.clearTimeout(id);
    this.timers.clear();
    this.root.remove();
  }

  async run(): Promise<void> {
    let st: SessionStatus;
    try {
      st = await this.status();
    } catch (e) {
      this.fail(e);
      return;
    }
    if (finalStatuses.includes(st.status)) {
      this.finish(st.status);
      return;
    }
    this.steps = orderSteps(this.opts.steps?.length ? this.opts.steps : Object.keys(st.steps));
    this.next(st);
  }

  /** next goes to the first step not accepted yet, or waits for the decision. */
  private next(st?: SessionStatus): void {
    const idx = this.steps.findIndex((s) => !this.accepted.has(s) && st?.steps[s]?.status !== "accepted");
    if (idx < 0) {
      this.processing();
      return;
    }
    const step = this.steps[idx];
    this.setProgress(idx);
    this.emitStep(step, "started");
    if (step === "nfc") this.handoff(step);
    else this.intro(step);
  }

  private async advance(): Promise<void> {
    try {
      this.next(await this.status());
    } catch (e) {
      this.fail(e);
    }
  }

  /**
   * status reads the session, trying again on a passing problem (no connection, rate
   * limited, overloaded) with waits of 1, 2, 4, 8 and 16 seconds before giving up.
   */
  private async status(): Promise<SessionStatus> {
    for (let wait = 1000; ; wait *= 2) {
      try {
        return await this.client.status();
      } catch (e) {
        if (this.destroyed || wait > 16000 || !(e instanceof IdStreamError) || !transientCodes.includes(e.code)) throw e;
        this.say(this.t(errorKey(e.code)));
      }
      await this.sleep(wait);
    }
  }

  private setState(state: string): void {
    this.root.dataset.state = state;
  }

  private setProgress(idx: number): void {
    const total = this.steps.length;
    this.progress.textContent = this.t("progress", { n: Math.min(idx + 1, total), total });
    this.bar.setAttribute("aria-valuemax", String(total));
    this.bar.setAttribute("aria-valuenow", String(idx));
    this.bar.setAttribute("aria-label", this.progress.textContent);
    (this.bar.firstElementChild as HTMLElement).style.width = `${Math.round((idx / total) * 100)}%`;
  }

  private show(state: string, headingKey: TextKey, ...children: (Node | string | null)[]): void {
    this.setState(state);
    this.heading.textContent = this.t(headingKey);
    replace(this.body, ...children);
    this.heading.focus({ preventScroll: false });
  }

  private say(text: string): void {
    this.live.textContent = text;
  }

  private emitStep(step: string, status: StepEvent["status"], reasons?: string[]): void {
    this.opts.onStep?.({ step, index: this.steps.indexOf(step), total: this.steps.length, status, reasons });
  }

  private isDocument(step: string): boolean {
    return step !== "selfie";
  }

  /** intro explains a picture step and offers the camera, or a file where there is none. */
  private intro(step: string, notice?: HTMLElement): void {
    const stepKey = `step.${step}` as TextKey;
    const introKey = `intro.${step}` as TextKey;
    const actions = h("div", { class: "ids-actions" });
    if (cameraAvailable()) actions.append(button("ids-primary ids-open-camera", this.t("action.open_camera"), () => void this.openCamera(step)));
    else actions.append(h("p", { class: "ids-notice" }, this.t("camera.unavailable", { what: this.t(this.isDocument(step) ? "what.document" : "what.selfie") })));
    actions.append(this.fileInput(step));
    this.show(`intro:${step}`, stepKey, notice ?? null, h("p", { class: "ids-intro" }, this.t(introKey)), actions);
  }

  /** fileInput is the upload fallback: a JPEG or PNG of at most 10 MiB. */
  private fileInput(step: string): HTMLElement {
    const id = `ids-file-${step}`;
    const input = h("input", { id, class: "ids-file", type: "file", accept: "image/jpeg,image/png" });
    if (step !== "selfie") input.setAttribute("capture", "environment");
    input.addEventListener("change", () => {
      const f = input.files?.[0];
      if (!f) return;
      if (f.size > maxImageBytes) {
        this.error(new IdStreamError("payload_too_large", 413, "the file exceeds 10 MiB"), step);
        return;
      }
      if (f.type !== "image/jpeg" && f.type !== "image/png") {
        this.error(new IdStreamError("invalid_image", 422, "the file is not a JPEG or PNG"), step);
        return;
      }
      void this.upload(step, f, captureSignals(this.opts.nonce, "file"));
    });
    return h("label", { class: "ids-secondary ids-file-label", for: id }, this.t("action.upload"), input);
  }

  private async openCamera(step: string): Promise<void> {
    const doc = this.isDocument(step);
    const video = h("video", { class: doc ? "ids-video" : "ids-video ids-mirror", autoplay: "", muted: "", playsinline: "", "aria-label": this.t(doc ? "camera.label.document" : "camera.label.selfie") });
    const overlay = h("div", { class: doc ? "ids-overlay ids-card-frame" : "ids-overlay ids-face-oval", "aria-hidden": "true" });
    const hint = h("p", { class: "ids-hint", "aria-live": "polite" }, this.t("camera.starting"));
    const shutter = button("ids-primary ids-shutter", this.t("action.take_photo"), () => void this.shoot(step));
    shutter.disabled = true;
    this.show(`camera:${step}`, `step.${step}` as TextKey, h("div", { class: "ids-viewport" }, video, overlay), hint, h("div", { class: "ids-actions" }, shutter, this.fileInput(step)));
    this.stopCamera();
    this.say("");
    try {
      this.camera = await openCamera(video, doc ? "environment" : "user");
    } catch {
      if (this.destroyed) return;
      const notice = h("p", { class: "ids-notice", role: "alert" }, this.t("camera.unavailable", { what: this.t(doc ? "what.document" : "what.selfie") }));
      this.intro(step, notice);
      return;
    }
    if (this.destroyed) {
      this.stopCamera();
      return;
    }
    shutter.disabled = false;
    shutter.focus();
    const probe = document.createElement("canvas");
    let last = "";
    const tick = () => {
      if (!this.camera || this.camera.video !== video) return;
      const stats = measure(video, probe);
      if (stats) {
        const verdict = hintFor(stats, doc ? "document" : "selfie");
        if (verdict !== last) {
          hint.textContent = this.t(`hint.${verdict}` as TextKey);
          hint.dataset.hint = verdict;
          last = verdict;
        }
      }
      this.later(tick, 400);
    };
    tick();
  }

  private async shoot(step: string): Promise<void> {
    // Taken at once, so a second click while the frame is encoded finds no camera: one photo
    // per click, however fast the clicks.
    const cam = this.camera;
    if (!cam) return;
    this.camera = null;
    const track = cam.stream.getVideoTracks()[0];
    const signals = captureSignals(this.opts.nonce, "web_camera", track);
    let photo: Blob;
    try {
      photo = await takePhoto(cam.video);
    } catch (e) {
      this.error(new IdStreamError("other", 0, e instanceof Error ? e.message : String(e)), step);
      return;
    } finally {
      cam.stop();
    }
    await this.upload(step, photo, signals);
  }

  private async upload(step: string, image: Blob, signals: Record<string, string>): Promise<void> {
    this.stopCamera(); // an upload from the camera screen: the camera is done
    const preview = h("img", { class: "ids-preview", alt: "" });
    const url = URL.createObjectURL(image);
    preview.src = url;
    this.show(`uploading:${step}`, `step.${step}` as TextKey, preview, h("p", { class: "ids-busy" }, this.t("status.checking")));
    this.say(this.t("status.uploading"));
    let res: CaptureResult;
    try {
      res = await this.client.submitImage(step, image, signals);
    } catch (e) {
      URL.revokeObjectURL(url);
      this.error(e, step);
      return;
    }
    URL.revokeObjectURL(url);
    if (res.status === "pending") {
      this.emitStep(step, "pending");
      this.say(this.t("status.pending"));
      try {
        res = await this.awaitVerdict(step, res);
      } catch (e) {
        this.fail(e);
        return;
      }
    }
    if (res.status === "retake") {
      this.retake(step, res.quality?.reasons ?? []);
      return;
    }
    this.accepted.add(step);
    this.emitStep(step, "accepted");
    this.say(this.t("status.accepted"));
    await this.advance();
  }

  /** awaitVerdict polls the session until the gate has answered a pending capture. */
  private async awaitVerdict(step: string, res: CaptureResult): Promise<CaptureResult> {
    for (let i = 0; i < 60 && !this.destroyed; i++) {
      await this.sleep(1000);
      try {
        const st = await this.client.status();
        const s = st.steps[step];
        if (s?.capture_id === res.capture_id && (s.status === "accepted" || s.status === "retake")) {
          return { ...res, status: s.status };
        }
      } catch (e) {
        if (isFatal(e)) throw e;
        // keep waiting: a status read failing once is not the capture failing
      }
    }
    return { ...res, status: "retake" };
  }

  private retake(step: string, reasons: string[]): void {
    this.emitStep(step, "retake", reasons);
    const list = h("ul", { class: "ids-reasons" });
    for (const r of reasons.length ? reasons : ["other"]) list.append(h("li", { "data-reason": r }, this.t(reasonKey(r))));
    const actions = h("div", { class: "ids-actions" });
    if (cameraAvailable()) actions.append(button("ids-primary ids-retake", this.t("action.retake"), () => void this.openCamera(step)));
    actions.append(this.fileInput(step));
    // The box is an alert: it is announced once, and the status line is cleared.
    this.show(`retake:${step}`, `step.${step}` as TextKey, h("div", { class: "ids-retake-box", role: "alert" }, h("p", {}, this.t("status.retake")), list), actions);
    this.say("");
  }

  /** handoff shows a QR code with a link that lets a phone do the chip step, and waits. */
  private async handoff(step: string): Promise<void> {
    this.show(`handoff:${step}`, "step.nfc", h("p", { class: "ids-intro" }, this.t("intro.nfc")), h("p", { class: "ids-busy" }, this.t("camera.starting")));
    let link;
    try {
      link = await this.client.handoff();
    } catch (e) {
      if (e instanceof IdStreamError && e.code === "handoff_used") {
        this.accepted.add(step); // read already, from another page or a phone
        await this.advance();
        return;
      }
      this.error(e, step);
      return;
    }
    // A link lives 15 minutes: a fresh one (and QR code) a minute before it ends.
    const renewAt = Date.parse(link.expires_at) - 60_000;
    const qr = h("img", { class: "ids-qr", alt: this.t("handoff.qr_alt"), width: "240", height: "240" });
    qr.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(link.qr_svg)}`;
    const anchor = h("a", { class: "ids-handoff-link", href: link.url, rel: "noreferrer noopener" }, link.url);
    const app = h("a", { class: "ids-secondary ids-open-app", href: link.app_url, rel: "noreferrer noopener" }, this.t("action.open_on_phone"));
    this.show(`handoff:${step}`, "step.nfc", h("p", { class: "ids-intro" }, this.t("intro.nfc")), qr, h("p", { class: "ids-small" }, this.t("handoff.link"), " ", anchor), h("div", { class: "ids-actions" }, app));
    this.say(this.t("status.waiting_phone"));
    this.watch(2000, false, (st) => {
      if (st?.steps[step]?.status === "accepted") {
        this.accepted.add(step);
        this.emitStep(step, "accepted");
        this.say(this.t("status.chip_done"));
        this.next(st);
        return true;
      }
      if (Date.now() >= renewAt) {
        void this.handoff(step);
        return true;
      }
      return false;
    });
  }

  /**
   * processing waits for the decision after the last step. A reviewer may send a step back
   * meanwhile (the session is capturing again, that step's status retake): the person takes
   * it again here.
   */
  private processing(): void {
    this.setProgress(this.steps.length);
    this.show("processing", "status.processing", h("div", { class: "ids-spinner", "aria-hidden": "true" }));
    this.say(this.t("status.processing"));
    this.watch(1500, true, (st) => {
      const back = st?.status === "capturing" ? this.steps.filter((s) => st.steps[s]?.status === "retake") : [];
      if (!back.length) return false;
      for (const s of back) {
        this.accepted.delete(s);
        this.emitStep(s, "retake");
      }
      this.next(st);
      return true;
    });
  }

  /**
   * watch reads the session every interval ms (at once too when now), ends the UI on a final
   * status or a fatal error, and otherwise asks then whether it is done (st is undefined
   * after a read that failed for a passing reason).
   */
  private watch(interval: number, now: boolean, then: (st?: SessionStatus) => boolean): void {
    const poll = async () => {
      if (this.destroyed) return;
      let st: SessionStatus | undefined;
      try {
        st = await this.client.status();
        if (finalStatuses.includes(st.status)) {
          this.finish(st.status);
          return;
        }
      } catch (e) {
        if (isFatal(e)) {
          this.fail(e);
          return;
        }
      }
      if (!then(st)) this.later(() => void poll(), interval);
    };
    if (now) void poll();
    else this.later(() => void poll(), interval);
  }

  private finish(status: string): void {
    this.stopCamera();
    const key = `final.${status}` as TextKey;
    this.heading.textContent = "";
    this.setState(`final:${status}`);
    const msg = h("p", { class: `ids-final ids-final-${status}`, role: "alert", tabindex: "-1" }, this.t(key));
    replace(this.body, msg);
    msg.focus();
    this.say("");
    this.opts.onComplete?.({ sessionId: this.opts.sessionId, status });
  }

  /** error shows a problem that the person can act on, in the step it happened in. */
  private error(e: unknown, step: string): void {
    const err = toError(e);
    if (isFatal(err)) {
      this.fail(err);
      return;
    }
    this.opts.onError?.(err);
    const notice = h("p", { class: "ids-notice ids-error", role: "alert", "data-code": err.code }, this.t(errorKey(err.code)));
    if (step === "nfc") {
      replace(this.body, notice, button("ids-primary", this.t("action.continue"), () => void this.handoff(step)));
      this.setState(`error:${step}`);
      return;
    }
    this.intro(step, notice);
    this.setState(`error:${step}`);
  }

  /** fail ends the UI on an error the person cannot fix here. */
  private fail(e: unknown): void {
    const err = toError(e);
    this.stopCamera();
    this.setState(`failed:${err.code}`);
    this.heading.textContent = "";
    const msg = h("p", { class: "ids-notice ids-error", role: "alert", tabindex: "-1", "data-code": err.code }, this.t(errorKey(err.code)));
    replace(this.body, msg);
    msg.focus();
    if (err.code === "session_expired") this.opts.onComplete?.({ sessionId: this.opts.sessionId, status: "expired" });
    this.opts.onError?.(err);
  }

  private stopCamera(): void {
    this.camera?.stop();
    this.camera = null;
  }

  private later(fn: () => void, ms: number): void {
    const id = window.setTimeout(() => {
      this.timers.delete(id);
      if (!this.destroyed) fn();
    }, ms);
    this.timers.add(id);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.later(resolve, ms));
  }
}

function toError(e: unknown): IdStreamError {
  if (e instanceof IdStreamError) return e;
  return new IdStreamError("other", 0, e instanceof Error ? e.message : String(e));
}
