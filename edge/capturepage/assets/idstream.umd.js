(function (root, factory) {
  if (typeof define === "function" && define.amd) define([], factory);
  else if (typeof module === "object" && module.exports) module.exports = factory();
  else root.IdStream = factory();
})(typeof self !== "undefined" ? self : this, function () {
"use strict";
var __idstream = (() => {
  var __defProp = Object.defineProperty;
  var __getOwnPropDesc = Object.getOwnPropertyDescriptor;
  var __getOwnPropNames = Object.getOwnPropertyNames;
  var __hasOwnProp = Object.prototype.hasOwnProperty;
  var __export = (target, all) => {
    for (var name in all)
      __defProp(target, name, { get: all[name], enumerable: true });
  };
  var __copyProps = (to, from, except, desc) => {
    if (from && typeof from === "object" || typeof from === "function") {
      for (let key of __getOwnPropNames(from))
        if (!__hasOwnProp.call(to, key) && key !== except)
          __defProp(to, key, { get: () => from[key], enumerable: !(desc = __getOwnPropDesc(from, key)) || desc.enumerable });
    }
    return to;
  };
  var __toCommonJS = (mod) => __copyProps(__defProp({}, "__esModule", { value: true }), mod);

  // src/index.ts
  var index_exports = {};
  __export(index_exports, {
    IdStreamError: () => IdStreamError,
    start: () => start
  });

  // src/api.ts
  var IdStreamError = class extends Error {
    constructor(code, status, message, requestId) {
      super(message);
      this.name = "IdStreamError";
      this.code = code;
      this.status = status;
      this.requestId = requestId;
    }
  };
  var Client = class {
    constructor(baseUrl, sessionId, token, signal) {
      this.sessionId = sessionId;
      this.token = token;
      this.signal = signal;
      this.base = baseUrl.replace(/\/+$/, "");
    }
    url(path) {
      return `${this.base}/v1/ekyc/sessions/${encodeURIComponent(this.sessionId)}${path}`;
    }
    async call(method, url, body) {
      let res;
      try {
        res = await fetch(url, {
          method,
          body,
          headers: { Authorization: `Bearer ${this.token}`, Accept: "application/json" },
          credentials: "omit",
          signal: this.signal,
          cache: "no-store",
          referrerPolicy: "no-referrer"
        });
      } catch (e) {
        throw new IdStreamError("network", 0, e instanceof Error ? e.message : String(e));
      }
      let json = null;
      try {
        json = await res.json();
      } catch {
      }
      if (!res.ok) {
        const p = json ?? {};
        throw new IdStreamError(p.code ?? "other", res.status, p.detail ?? p.title ?? `HTTP ${res.status}`, p.request_id);
      }
      return { status: res.status, json };
    }
    /** status reads the session's status and steps. */
    async status() {
      return (await this.call("GET", this.url(""))).json;
    }
    /**
     * submitImage posts one capture: side is "front", "back" or "passport" for a document,
     * undefined for the selfie; signals are sent as client.<name> parts.
     */
    async submitImage(step, image, signals) {
      const form = new FormData();
      const side = sideOf(step);
      if (side) form.append("side", side);
      form.append("image", image, image.type === "image/png" ? "capture.png" : "capture.jpg");
      for (const [k, v] of Object.entries(signals)) form.append(`client.${k}`, v);
      const path = step === "selfie" ? "/selfie" : "/document";
      return (await this.call("POST", this.url(path), form)).json;
    }
    /** handoff asks for a link that lets a phone do the chip step. */
    async handoff() {
      return (await this.call("POST", this.url("/handoff"))).json;
    }
  };
  function sideOf(step) {
    switch (step) {
      case "document_front":
        return "front";
      case "document_back":
        return "back";
      case "passport":
        return "passport";
    }
    return "";
  }
  var stepOrder = ["document_front", "document_back", "passport", "nfc", "selfie"];
  function orderSteps(steps) {
    const set = new Set(steps);
    return stepOrder.filter((s) => set.has(s));
  }

  // src/camera.ts
  function cameraAvailable() {
    return typeof navigator !== "undefined" && !!navigator.mediaDevices?.getUserMedia && window.isSecureContext;
  }
  async function openCamera(video, facing) {
    const size = facing === "environment" ? { width: { ideal: 1920 }, height: { ideal: 1080 } } : { width: { ideal: 1280 }, height: { ideal: 720 } };
    const stream = await navigator.mediaDevices.getUserMedia({
      audio: false,
      video: { facingMode: { ideal: facing }, ...size }
    });
    const stop = () => {
      for (const t of stream.getTracks()) t.stop();
      video.srcObject = null;
    };
    try {
      video.srcObject = stream;
      video.muted = true;
      video.playsInline = true;
      await video.play();
      if (video.videoWidth === 0) {
        await new Promise((resolve) => video.addEventListener("loadedmetadata", () => resolve(), { once: true }));
      }
    } catch (e) {
      stop();
      throw e;
    }
    return { stream, video, stop };
  }
  var blurThresholds = { document: 300, selfie: 20 };
  function hintFor(s, kind) {
    if (s.brightness < 50) return "dark";
    if (s.brightness > 235 && s.clipped > 0.5 && s.sharpness < 4 * blurThresholds[kind]) return "bright";
    if (s.sharpness < blurThresholds[kind]) return "blurry";
    return "ok";
  }
  function grayStats(rgba, width, height) {
    const n = width * height;
    const g = new Float32Array(n);
    let sum = 0;
    let clipped = 0;
    for (let i = 0; i < n; i++) {
      const v = 0.299 * rgba[4 * i] + 0.587 * rgba[4 * i + 1] + 0.114 * rgba[4 * i + 2];
      g[i] = v;
      sum += v;
      if (v >= 250) clipped++;
    }
    let lsum = 0;
    let lsq = 0;
    let count = 0;
    for (let y = 1; y < height - 1; y++) {
      for (let x = 1; x < width - 1; x++) {
        const i = y * width + x;
        const lap = g[i - 1] + g[i + 1] + g[i - width] + g[i + width] - 4 * g[i];
        lsum += lap;
        lsq += lap * lap;
        count++;
      }
    }
    const mean = count ? lsum / count : 0;
    return { brightness: n ? sum / n : 0, sharpness: count ? lsq / count - mean * mean : 0, clipped: n ? clipped / n : 0 };
  }
  function measure(video, canvas) {
    if (!video.videoWidth || !video.videoHeight) return null;
    const w = Math.min(480, video.videoWidth);
    const h2 = Math.max(1, Math.round(video.videoHeight / video.videoWidth * w));
    canvas.width = w;
    canvas.height = h2;
    const ctx = canvas.getContext("2d", { willReadFrequently: true });
    if (!ctx) return null;
    ctx.drawImage(video, 0, 0, w, h2);
    return grayStats(ctx.getImageData(0, 0, w, h2).data, w, h2);
  }
  async function takePhoto(video) {
    const canvas = document.createElement("canvas");
    canvas.width = video.videoWidth;
    canvas.height = video.videoHeight;
    const ctx = canvas.getContext("2d");
    if (!ctx) throw new Error("no 2d canvas");
    ctx.drawImage(video, 0, 0);
    return new Promise(
      (resolve, reject) => canvas.toBlob((b) => b ? resolve(b) : reject(new Error("the frame could not be encoded")), "image/jpeg", 0.92)
    );
  }
  var virtualCameraLabels = [/obs/i, /virtual/i, /manycam/i, /snap camera/i, /xsplit/i, /splitcam/i, /e2esoft|vcam/i, /camtwist/i, /droidcam/i, /epoccam/i, /nvidia broadcast/i];
  function isVirtualCamera(label) {
    return virtualCameraLabels.some((re) => re.test(label));
  }
  function captureSignals(nonce, source, track) {
    const s = {
      timestamp: (/* @__PURE__ */ new Date()).toISOString(),
      source,
      sdk: "web",
      sdk_version: "1.0.0"
    };
    if (nonce) s.nonce = nonce;
    if (track) {
      const set = track.getSettings();
      const label = track.label ?? "";
      s.virtual_camera = String(isVirtualCamera(label));
      s.camera_label = label.slice(0, 120);
      if (set.width && set.height) s.stream_resolution = `${set.width}x${set.height}`;
      if (set.frameRate) s.stream_frame_rate = String(Math.round(set.frameRate));
      if (set.facingMode) s.stream_facing = String(set.facingMode);
    }
    if (typeof navigator !== "undefined") {
      s.platform = (navigator.platform ?? "").slice(0, 60);
      s.webdriver = String(!!navigator.webdriver);
    }
    return s;
  }

  // src/dom.ts
  function h(tag, attrs = {}, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v !== void 0) el.setAttribute(k, v);
    }
    for (const c of children) {
      if (c === null || c === void 0 || c === false) continue;
      el.append(c);
    }
    return el;
  }
  function button(cls, text, onClick) {
    const b = h("button", { type: "button", class: cls }, text);
    b.addEventListener("click", onClick);
    return b;
  }
  function replace(el, ...children) {
    el.replaceChildren(...children.filter((c) => c !== null && c !== void 0 && c !== false));
  }

  // src/i18n.ts
  var en = {
    title: "Verify your identity",
    progress: "Step {n} of {total}",
    "step.document_front": "Front of your ID card",
    "step.document_back": "Back of your ID card",
    "step.passport": "Your passport's photo page",
    "step.nfc": "Your card's chip",
    "step.selfie": "A photo of your face",
    "intro.document_front": "Place the front of your card on a dark, flat surface in good light, and fit it inside the frame.",
    "intro.document_back": "Turn your card over and photograph its back, with the code lines at the bottom fully visible.",
    "intro.passport": "Open your passport at the photo page and fit the whole page, with the code lines at the bottom, inside the frame.",
    "intro.selfie": "Look straight at the camera with your face inside the oval. Remove glasses and hats; no one else in the picture.",
    "intro.nfc": "Your browser cannot read the chip. Scan this code with your phone to read the chip in the app, then come back here.",
    "action.open_camera": "Open camera",
    "action.take_photo": "Take photo",
    "action.retake": "Take the photo again",
    "action.upload": "Upload a photo instead",
    "action.use_photo": "Use this photo",
    "action.continue": "Continue",
    "action.open_on_phone": "Open on this phone",
    "camera.unavailable": "The camera cannot be used here. Upload a photo of the {what} instead.",
    "camera.starting": "Starting the camera…",
    "camera.label.document": "Camera view. Fit the card inside the frame.",
    "camera.label.selfie": "Camera view. Fit your face inside the oval.",
    "hint.dark": "It is too dark: move to a brighter place.",
    "hint.bright": "It is too bright: move away from direct light.",
    "hint.blurry": "Hold still: the picture is blurred.",
    "hint.ok": "Looks good. Take the photo when ready.",
    "status.uploading": "Sending the photo…",
    "status.checking": "Checking the photo…",
    "status.accepted": "Photo accepted.",
    "status.retake": "Please take the photo again:",
    "status.pending": "The photo is being checked. Please wait…",
    "status.waiting_phone": "Waiting for the chip to be read on your phone…",
    "status.chip_done": "The chip has been read.",
    "status.processing": "Thank you. We are checking your documents…",
    "final.verified": "You are verified. You can close this page.",
    "final.rejected": "We could not verify your identity. Please contact the service that sent you here.",
    "final.expired": "This link has expired. Ask the service that sent you here for a new one.",
    "final.cancelled": "This verification was cancelled.",
    "reason.blurry": "The picture is blurred: hold the phone still and let the camera focus.",
    "reason.glare": "There is a reflection on the document: tilt it slightly or move away from the light.",
    "reason.not_framed": "Fit the whole document inside the frame, with a little space around it.",
    "reason.too_dark": "It is too dark: move to a brighter place.",
    "reason.no_document": "No document was found: place the document inside the frame.",
    "reason.no_face": "No face was found: look straight at the camera, face inside the oval.",
    "reason.multiple_faces": "More than one face is visible: make sure you are alone in the picture.",
    "reason.face_too_small": "Your face is too small: move closer to the camera.",
    "reason.other": "The photo could not be used: please try again.",
    "error.session_expired": "This link has expired. Ask the service that sent you here for a new one.",
    "error.session_closed": "This verification is already finished.",
    "error.invalid_image": "This file is not a photo we can read. Use a JPEG or PNG picture.",
    "error.payload_too_large": "This file is too large. Use a picture under 10 MB.",
    "error.unauthorized": "This link is not valid. Ask the service that sent you here for a new one.",
    "error.not_found": "This link is not valid. Ask the service that sent you here for a new one.",
    "error.session_not_found": "This link is not valid. Ask the service that sent you here for a new one.",
    "error.forbidden": "This link is not valid. Ask the service that sent you here for a new one.",
    "error.unavailable": "The service is busy. Please wait a moment and try again.",
    "error.rate_limited": "Too many attempts. Please wait a moment and try again.",
    "error.overloaded": "The service is busy. Please wait a moment and try again.",
    "error.network": "The connection failed. Check your connection and try again.",
    "error.other": "Something went wrong. Please try again.",
    "what.document": "document",
    "what.selfie": "face",
    "handoff.link": "Or open this link on your phone:",
    "handoff.qr_alt": "QR code with a link that opens the chip reading on your phone"
  };
  var vi = {
    title: "Xác minh danh tính",
    progress: "Bước {n}/{total}",
    "step.document_front": "Mặt trước thẻ căn cước",
    "step.document_back": "Mặt sau thẻ căn cước",
    "step.passport": "Trang ảnh hộ chiếu",
    "step.nfc": "Chip trên thẻ",
    "step.selfie": "Ảnh chân dung",
    "intro.document_front": "Đặt mặt trước của thẻ trên mặt phẳng tối màu, nơi đủ sáng, và giữ thẻ nằm trong khung.",
    "intro.document_back": "Lật thẻ và chụp mặt sau, thấy rõ các dòng mã ở phía dưới.",
    "intro.passport": "Mở hộ chiếu ở trang có ảnh và giữ cả trang, gồm các dòng mã ở phía dưới, trong khung.",
    "intro.selfie": "Nhìn thẳng vào camera, giữ khuôn mặt trong khung bầu dục. Bỏ kính và mũ; không có người khác trong ảnh.",
    "intro.nfc": "Trình duyệt không đọc được chip. Quét mã này bằng điện thoại để đọc chip trong ứng dụng, rồi quay lại đây.",
    "action.open_camera": "Mở camera",
    "action.take_photo": "Chụp ảnh",
    "action.retake": "Chụp lại",
    "action.upload": "Tải ảnh lên",
    "action.use_photo": "Dùng ảnh này",
    "action.continue": "Tiếp tục",
    "action.open_on_phone": "Mở trên điện thoại này",
    "camera.unavailable": "Không dùng được camera ở đây. Hãy tải lên ảnh {what}.",
    "camera.starting": "Đang mở camera…",
    "camera.label.document": "Hình ảnh camera. Giữ thẻ nằm trong khung.",
    "camera.label.selfie": "Hình ảnh camera. Giữ khuôn mặt trong khung bầu dục.",
    "hint.dark": "Quá tối: hãy di chuyển đến nơi sáng hơn.",
    "hint.bright": "Quá sáng: tránh ánh sáng chiếu trực tiếp.",
    "hint.blurry": "Giữ yên máy: ảnh đang bị mờ.",
    "hint.ok": "Tốt. Hãy chụp khi sẵn sàng.",
    "status.uploading": "Đang gửi ảnh…",
    "status.checking": "Đang kiểm tra ảnh…",
    "status.accepted": "Ảnh đã được chấp nhận.",
    "status.retake": "Vui lòng chụp lại:",
    "status.pending": "Ảnh đang được kiểm tra. Vui lòng chờ…",
    "status.waiting_phone": "Đang chờ đọc chip trên điện thoại…",
    "status.chip_done": "Đã đọc chip.",
    "status.processing": "Cảm ơn bạn. Chúng tôi đang kiểm tra giấy tờ…",
    "final.verified": "Bạn đã được xác minh. Bạn có thể đóng trang này.",
    "final.rejected": "Chúng tôi không thể xác minh danh tính của bạn. Vui lòng liên hệ với dịch vụ đã gửi bạn đến đây.",
    "final.expired": "Liên kết đã hết hạn. Hãy yêu cầu dịch vụ đã gửi bạn đến đây cấp liên kết mới.",
    "final.cancelled": "Phiên xác minh này đã bị hủy.",
    "reason.blurry": "Ảnh bị mờ: giữ yên điện thoại và chờ camera lấy nét.",
    "reason.glare": "Giấy tờ bị lóa sáng: nghiêng nhẹ hoặc tránh xa nguồn sáng.",
    "reason.not_framed": "Giữ toàn bộ giấy tờ trong khung, chừa một khoảng trống xung quanh.",
    "reason.too_dark": "Quá tối: hãy di chuyển đến nơi sáng hơn.",
    "reason.no_document": "Không thấy giấy tờ: hãy đặt giấy tờ trong khung.",
    "reason.no_face": "Không thấy khuôn mặt: nhìn thẳng vào camera, giữ mặt trong khung bầu dục.",
    "reason.multiple_faces": "Có nhiều hơn một khuôn mặt: chỉ một mình bạn trong ảnh.",
    "reason.face_too_small": "Khuôn mặt quá nhỏ: hãy đến gần camera hơn.",
    "reason.other": "Không dùng được ảnh này: vui lòng thử lại.",
    "error.session_expired": "Liên kết đã hết hạn. Hãy yêu cầu dịch vụ đã gửi bạn đến đây cấp liên kết mới.",
    "error.session_closed": "Phiên xác minh này đã kết thúc.",
    "error.invalid_image": "Không đọc được tệp này. Hãy dùng ảnh JPEG hoặc PNG.",
    "error.payload_too_large": "Tệp quá lớn. Hãy dùng ảnh nhỏ hơn 10 MB.",
    "error.unauthorized": "Liên kết không hợp lệ. Hãy yêu cầu dịch vụ đã gửi bạn đến đây cấp liên kết mới.",
    "error.not_found": "Liên kết không hợp lệ. Hãy yêu cầu dịch vụ đã gửi bạn đến đây cấp liên kết mới.",
    "error.session_not_found": "Liên kết không hợp lệ. Hãy yêu cầu dịch vụ đã gửi bạn đến đây cấp liên kết mới.",
    "error.forbidden": "Liên kết không hợp lệ. Hãy yêu cầu dịch vụ đã gửi bạn đến đây cấp liên kết mới.",
    "error.unavailable": "Hệ thống đang bận. Vui lòng chờ một lát rồi thử lại.",
    "error.rate_limited": "Quá nhiều lần thử. Vui lòng chờ một lát rồi thử lại.",
    "error.overloaded": "Hệ thống đang bận. Vui lòng chờ một lát rồi thử lại.",
    "error.network": "Mất kết nối. Kiểm tra kết nối mạng rồi thử lại.",
    "error.other": "Đã xảy ra lỗi. Vui lòng thử lại.",
    "what.document": "giấy tờ",
    "what.selfie": "khuôn mặt",
    "handoff.link": "Hoặc mở liên kết này trên điện thoại:",
    "handoff.qr_alt": "Mã QR chứa liên kết mở bước đọc chip trên điện thoại"
  };
  var catalogues = { en, vi };
  function pickLocale(requested, browser) {
    for (const l of [requested, ...browser ?? []]) {
      const base = (l ?? "").toLowerCase().split("-")[0];
      if (base === "vi" || base === "en") return base;
    }
    return "vi";
  }
  function translator(locale) {
    const cat = catalogues[locale];
    return (key, vars) => cat[key].replace(/\{(\w+)\}/g, (m, name) => vars && name in vars ? String(vars[name]) : m);
  }
  function reasonKey(reason) {
    const key = `reason.${reason}`;
    return key in en ? key : "reason.other";
  }
  function errorKey(code) {
    const key = `error.${code}`;
    return key in en ? key : "error.other";
  }

  // src/index.ts
  var maxImageBytes = 10 * 1024 * 1024;
  var finalStatuses = ["verified", "rejected", "expired", "cancelled"];
  var fatalCodes = ["session_expired", "session_closed", "unauthorized", "session_not_found", "not_found", "forbidden"];
  var transientCodes = ["network", "rate_limited", "overloaded", "unavailable", "not_ready", "internal"];
  function isFatal(e) {
    return e instanceof IdStreamError && fatalCodes.includes(e.code);
  }
  function start(opts) {
    if (!opts || !opts.sdkToken || !opts.sessionId) throw new TypeError("IdStream.start: sdkToken and sessionId are required");
    const host = typeof opts.container === "string" ? document.querySelector(opts.container) : opts.container;
    if (!host) throw new TypeError("IdStream.start: container not found");
    const flow = new Flow(host, opts);
    void flow.run();
    return { destroy: () => flow.destroy() };
  }
  var Flow = class {
    constructor(host, opts) {
      this.opts = opts;
      this.steps = [];
      /** steps accepted here: the session's view may answer before it shows them */
      this.accepted = /* @__PURE__ */ new Set();
      this.camera = null;
      this.timers = /* @__PURE__ */ new Set();
      this.destroyed = false;
      this.abort = new AbortController();
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
        this.live
      );
      host.replaceChildren(this.root);
    }
    destroy() {
      this.destroyed = true;
      this.abort.abort();
      this.stopCamera();
      for (const id of this.timers) window.clearTimeout(id);
      this.timers.clear();
      this.root.remove();
    }
    async run() {
      let st;
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
    next(st) {
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
    async advance() {
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
    async status() {
      for (let wait = 1e3; ; wait *= 2) {
        try {
          return await this.client.status();
        } catch (e) {
          if (this.destroyed || wait > 16e3 || !(e instanceof IdStreamError) || !transientCodes.includes(e.code)) throw e;
          this.say(this.t(errorKey(e.code)));
        }
        await this.sleep(wait);
      }
    }
    setState(state) {
      this.root.dataset.state = state;
    }
    setProgress(idx) {
      const total = this.steps.length;
      this.progress.textContent = this.t("progress", { n: Math.min(idx + 1, total), total });
      this.bar.setAttribute("aria-valuemax", String(total));
      this.bar.setAttribute("aria-valuenow", String(idx));
      this.bar.setAttribute("aria-label", this.progress.textContent);
      this.bar.firstElementChild.style.width = `${Math.round(idx / total * 100)}%`;
    }
    show(state, headingKey, ...children) {
      this.setState(state);
      this.heading.textContent = this.t(headingKey);
      replace(this.body, ...children);
      this.heading.focus({ preventScroll: false });
    }
    say(text) {
      this.live.textContent = text;
    }
    emitStep(step, status, reasons) {
      this.opts.onStep?.({ step, index: this.steps.indexOf(step), total: this.steps.length, status, reasons });
    }
    isDocument(step) {
      return step !== "selfie";
    }
    /** intro explains a picture step and offers the camera, or a file where there is none. */
    intro(step, notice) {
      const stepKey = `step.${step}`;
      const introKey = `intro.${step}`;
      const actions = h("div", { class: "ids-actions" });
      if (cameraAvailable()) actions.append(button("ids-primary ids-open-camera", this.t("action.open_camera"), () => void this.openCamera(step)));
      else actions.append(h("p", { class: "ids-notice" }, this.t("camera.unavailable", { what: this.t(this.isDocument(step) ? "what.document" : "what.selfie") })));
      actions.append(this.fileInput(step));
      this.show(`intro:${step}`, stepKey, notice ?? null, h("p", { class: "ids-intro" }, this.t(introKey)), actions);
    }
    /** fileInput is the upload fallback: a JPEG or PNG of at most 10 MiB. */
    fileInput(step) {
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
    async openCamera(step) {
      const doc = this.isDocument(step);
      const video = h("video", { class: doc ? "ids-video" : "ids-video ids-mirror", autoplay: "", muted: "", playsinline: "", "aria-label": this.t(doc ? "camera.label.document" : "camera.label.selfie") });
      const overlay = h("div", { class: doc ? "ids-overlay ids-card-frame" : "ids-overlay ids-face-oval", "aria-hidden": "true" });
      const hint = h("p", { class: "ids-hint", "aria-live": "polite" }, this.t("camera.starting"));
      const shutter = button("ids-primary ids-shutter", this.t("action.take_photo"), () => void this.shoot(step));
      shutter.disabled = true;
      this.show(`camera:${step}`, `step.${step}`, h("div", { class: "ids-viewport" }, video, overlay), hint, h("div", { class: "ids-actions" }, shutter, this.fileInput(step)));
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
            hint.textContent = this.t(`hint.${verdict}`);
            hint.dataset.hint = verdict;
            last = verdict;
          }
        }
        this.later(tick, 400);
      };
      tick();
    }
    async shoot(step) {
      const cam = this.camera;
      if (!cam) return;
      this.camera = null;
      const track = cam.stream.getVideoTracks()[0];
      const signals = captureSignals(this.opts.nonce, "web_camera", track);
      let photo;
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
    async upload(step, image, signals) {
      this.stopCamera();
      const preview = h("img", { class: "ids-preview", alt: "" });
      const url = URL.createObjectURL(image);
      preview.src = url;
      this.show(`uploading:${step}`, `step.${step}`, preview, h("p", { class: "ids-busy" }, this.t("status.checking")));
      this.say(this.t("status.uploading"));
      let res;
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
    async awaitVerdict(step, res) {
      for (let i = 0; i < 60 && !this.destroyed; i++) {
        await this.sleep(1e3);
        try {
          const st = await this.client.status();
          const s = st.steps[step];
          if (s?.capture_id === res.capture_id && (s.status === "accepted" || s.status === "retake")) {
            return { ...res, status: s.status };
          }
        } catch (e) {
          if (isFatal(e)) throw e;
        }
      }
      return { ...res, status: "retake" };
    }
    retake(step, reasons) {
      this.emitStep(step, "retake", reasons);
      const list = h("ul", { class: "ids-reasons" });
      for (const r of reasons.length ? reasons : ["other"]) list.append(h("li", { "data-reason": r }, this.t(reasonKey(r))));
      const actions = h("div", { class: "ids-actions" });
      if (cameraAvailable()) actions.append(button("ids-primary ids-retake", this.t("action.retake"), () => void this.openCamera(step)));
      actions.append(this.fileInput(step));
      this.show(`retake:${step}`, `step.${step}`, h("div", { class: "ids-retake-box", role: "alert" }, h("p", {}, this.t("status.retake")), list), actions);
      this.say("");
    }
    /** handoff shows a QR code with a link that lets a phone do the chip step, and waits. */
    async handoff(step) {
      this.show(`handoff:${step}`, "step.nfc", h("p", { class: "ids-intro" }, this.t("intro.nfc")), h("p", { class: "ids-busy" }, this.t("camera.starting")));
      let link;
      try {
        link = await this.client.handoff();
      } catch (e) {
        if (e instanceof IdStreamError && e.code === "handoff_used") {
          this.accepted.add(step);
          await this.advance();
          return;
        }
        this.error(e, step);
        return;
      }
      const renewAt = Date.parse(link.expires_at) - 6e4;
      const qr = h("img", { class: "ids-qr", alt: this.t("handoff.qr_alt"), width: "240", height: "240" });
      qr.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(link.qr_svg)}`;
      const anchor = h("a", { class: "ids-handoff-link", href: link.url, rel: "noreferrer noopener" }, link.url);
      const app = h("a", { class: "ids-secondary ids-open-app", href: link.app_url, rel: "noreferrer noopener" }, this.t("action.open_on_phone"));
      this.show(`handoff:${step}`, "step.nfc", h("p", { class: "ids-intro" }, this.t("intro.nfc")), qr, h("p", { class: "ids-small" }, this.t("handoff.link"), " ", anchor), h("div", { class: "ids-actions" }, app));
      this.say(this.t("status.waiting_phone"));
      const poll = async () => {
        if (this.destroyed) return;
        try {
          const st = await this.client.status();
          if (finalStatuses.includes(st.status)) {
            this.finish(st.status);
            return;
          }
          if (st.steps[step]?.status === "accepted") {
            this.accepted.add(step);
            this.emitStep(step, "accepted");
            this.say(this.t("status.chip_done"));
            this.next(st);
            return;
          }
        } catch (e) {
          if (isFatal(e)) {
            this.fail(e);
            return;
          }
        }
        if (Date.now() >= renewAt) {
          void this.handoff(step);
          return;
        }
        this.later(() => void poll(), 2e3);
      };
      this.later(() => void poll(), 2e3);
    }
    /** processing waits for the decision after the last step. */
    processing() {
      this.setProgress(this.steps.length);
      this.show("processing", "status.processing", h("div", { class: "ids-spinner", "aria-hidden": "true" }));
      this.say(this.t("status.processing"));
      const poll = async () => {
        if (this.destroyed) return;
        try {
          const st = await this.client.status();
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
        this.later(() => void poll(), 1500);
      };
      void poll();
    }
    finish(status) {
      this.stopCamera();
      const key = `final.${status}`;
      this.heading.textContent = "";
      this.setState(`final:${status}`);
      const msg = h("p", { class: `ids-final ids-final-${status}`, role: "alert", tabindex: "-1" }, this.t(key));
      replace(this.body, msg);
      msg.focus();
      this.say("");
      this.opts.onComplete?.({ sessionId: this.opts.sessionId, status });
    }
    /** error shows a problem that the person can act on, in the step it happened in. */
    error(e, step) {
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
    fail(e) {
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
    stopCamera() {
      this.camera?.stop();
      this.camera = null;
    }
    later(fn, ms) {
      const id = window.setTimeout(() => {
        this.timers.delete(id);
        if (!this.destroyed) fn();
      }, ms);
      this.timers.add(id);
    }
    sleep(ms) {
      return new Promise((resolve) => this.later(resolve, ms));
    }
  };
  function toError(e) {
    if (e instanceof IdStreamError) return e;
    return new IdStreamError("other", 0, e instanceof Error ? e.message : String(e));
  }
  return __toCommonJS(index_exports);
})();
return __idstream;
});
