// Camera access and on-device guidance: the rear camera for documents and the front one for
// the selfie, a brightness and sharpness reading of the live picture (a hint before upload,
// never a verdict: the server's quality gate decides), the frame taken as a JPEG, and the
// capture's signals the server's injection check reads.

export type Facing = "environment" | "user";

/** Camera is an open camera stream shown in a video element. */
export interface Camera {
  stream: MediaStream;
  video: HTMLVideoElement;
  stop(): void;
}

/** cameraAvailable reports whether this page may ask for a camera at all. */
export function cameraAvailable(): boolean {
  return typeof navigator !== "undefined" && !!navigator.mediaDevices?.getUserMedia && window.isSecureContext;
}

/** openCamera asks for the camera facing the given way and plays it in video. */
export async function openCamera(video: HTMLVideoElement, facing: Facing): Promise<Camera> {
  const size = facing === "environment" ? { width: { ideal: 1920 }, height: { ideal: 1080 } } : { width: { ideal: 1280 }, height: { ideal: 720 } };
  const stream = await navigator.mediaDevices.getUserMedia({
    audio: false,
    video: { facingMode: { ideal: facing }, ...size },
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
      await new Promise<void>((resolve) => video.addEventListener("loadedmetadata", () => resolve(), { once: true }));
    }
  } catch (e) {
    stop(); // a camera that cannot be shown is not left on
    throw e;
  }
  return { stream, video, stop };
}

/** FrameStats are the on-device readings of one frame. */
export interface FrameStats {
  /** mean luma, 0–255 */
  brightness: number;
  /** variance of the Laplacian of a grey copy at most 480 pixels wide */
  sharpness: number;
  /** share of pixels at 250 or more: burnt out */
  clipped: number;
}

/** Hint is the guidance shown before a photo is taken. */
export type Hint = "dark" | "bright" | "blurry" | "ok";

/**
 * Below these sharpness readings a frame is called blurred. A document's print gives strong
 * edges (a rendered card in focus reads about 6000, out of focus about 100); a face has
 * softer ones (a portrait in focus about 130, out of focus about 7).
 */
export const blurThresholds = { document: 300, selfie: 20 } as const;

/** hintFor turns frame readings into the person's next action. */
export function hintFor(s: FrameStats, kind: keyof typeof blurThresholds): Hint {
  if (s.brightness < 50) return "dark";
  // A white card (its white code zone) is bright without being overexposed: only a picture
  // mostly burnt out, its print washed away, is.
  if (s.brightness > 235 && s.clipped > 0.5 && s.sharpness < 4 * blurThresholds[kind]) return "bright";
  if (s.sharpness < blurThresholds[kind]) return "blurry";
  return "ok";
}

/** grayStats computes FrameStats of an RGBA buffer (width×height, 4 bytes a pixel). */
export function grayStats(rgba: Uint8ClampedArray, width: number, height: number): FrameStats {
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

/** measure reads the current frame of video at most 480 pixels wide (blur shows there). */
export function measure(video: HTMLVideoElement, canvas: HTMLCanvasElement): FrameStats | null {
  if (!video.videoWidth || !video.videoHeight) return null;
  const w = Math.min(480, video.videoWidth);
  const h = Math.max(1, Math.round((video.videoHeight / video.videoWidth) * w));
  canvas.width = w;
  canvas.height = h;
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  if (!ctx) return null;
  ctx.drawImage(video, 0, 0, w, h);
  return grayStats(ctx.getImageData(0, 0, w, h).data, w, h);
}

/** takePhoto encodes the current frame of video at full resolution as a JPEG. */
// The selfie's preview is mirrored (CSS), the photo is not: it is what the camera saw.
export async function takePhoto(video: HTMLVideoElement): Promise<Blob> {
  const canvas = document.createElement("canvas");
  canvas.width = video.videoWidth;
  canvas.height = video.videoHeight;
  const ctx = canvas.getContext("2d");
  if (!ctx) throw new Error("no 2d canvas");
  ctx.drawImage(video, 0, 0);
  return new Promise((resolve, reject) =>
    canvas.toBlob((b) => (b ? resolve(b) : reject(new Error("the frame could not be encoded"))), "image/jpeg", 0.92),
  );
}

/** Known virtual camera software, by the words of its device label. */
const virtualCameraLabels = [/obs/i, /virtual/i, /manycam/i, /snap camera/i, /xsplit/i, /splitcam/i, /e2esoft|vcam/i, /camtwist/i, /droidcam/i, /epoccam/i, /nvidia broadcast/i];

/** isVirtualCamera reports whether a device label names known virtual camera software. */
export function isVirtualCamera(label: string): boolean {
  return virtualCameraLabels.some((re) => re.test(label));
}

/**
 * captureSignals are the client signals sent with a capture (the server's injection check
 * reads nonce, timestamp, source and the boolean virtual_camera): the session nonce echoed,
 * the device time of the capture, where the image came from, and the stream's metadata.
 * A browser frame carries no EXIF, so the source of a camera frame is "web_camera".
 */
export function captureSignals(nonce: string | undefined, source: "web_camera" | "file", track?: MediaStreamTrack): Record<string, string> {
  const s: Record<string, string> = {
    timestamp: new Date().toISOString(),
    source,
    sdk: "web",
    sdk_version: "1.0.0",
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
