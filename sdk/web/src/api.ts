// The REST calls the SDK makes with a session's sdk_token: the step endpoints, the SDK view
// of Data Get, and the chip hand-off link. Every error is an IdStreamError carrying the API's
// stable problem code (or "network" when no answer came).

/** One step's entry in the session's SDK view. */
export interface StepStatus {
  status: "pending" | "submitted" | "accepted" | "retake" | string;
  capture_id?: string;
}

/** The SDK view of Data Get: what an sdk_token may see. */
export interface SessionStatus {
  session_id: string;
  status: "open" | "capturing" | "processing" | "verified" | "rejected" | "expired" | "cancelled" | string;
  steps: Record<string, StepStatus>;
}

/** The quality gate's verdict on a capture. */
export interface Quality {
  passed: boolean;
  blur: number;
  glare: number;
  framing: string;
  reasons: string[];
}

/** The answer to an image step: accepted, retake (quality says why) or pending. */
export interface CaptureResult {
  capture_id: string;
  step: string;
  status: "accepted" | "retake" | "pending";
  quality?: Quality;
}

/** A chip hand-off link for a phone. */
export interface Handoff {
  url: string;
  app_url: string;
  expires_at: string;
  qr_svg: string;
}

/** IdStreamError is a failed call: code is the API's problem code, or "network". */
export class IdStreamError extends Error {
  readonly code: string;
  readonly status: number;
  readonly requestId?: string;
  constructor(code: string, status: number, message: string, requestId?: string) {
    super(message);
    this.name = "IdStreamError";
    this.code = code;
    this.status = status;
    this.requestId = requestId;
  }
}

/** Client calls one session's endpoints with its sdk_token. */
export class Client {
  private readonly base: string;
  constructor(
    baseUrl: string,
    private readonly sessionId: string,
    private readonly token: string,
    private readonly signal?: AbortSignal,
  ) {
    this.base = baseUrl.replace(/\/+$/, "");
  }

  private url(path: string): string {
    return `${this.base}/v1/ekyc/sessions/${encodeURIComponent(this.sessionId)}${path}`;
  }

  private async call<T>(method: string, url: string, body?: BodyInit): Promise<{ status: number; json: T }> {
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        body,
        headers: { Authorization: `Bearer ${this.token}`, Accept: "application/json" },
        credentials: "omit",
        signal: this.signal,
        cache: "no-store",
        referrerPolicy: "no-referrer",
      });
    } catch (e) {
      throw new IdStreamError("network", 0, e instanceof Error ? e.message : String(e));
    }
    let json: unknown = null;
    try {
      json = await res.json();
    } catch {
      // not JSON: handled below
    }
    if (!res.ok) {
      const p = (json ?? {}) as { code?: string; detail?: string; title?: string; request_id?: string };
      throw new IdStreamError(p.code ?? "other", res.status, p.detail ?? p.title ?? `HTTP ${res.status}`, p.request_id);
    }
    return { status: res.status, json: json as T };
  }

  /** status reads the session's status and steps. */
  async status(): Promise<SessionStatus> {
    return (await this.call<SessionStatus>("GET", this.url(""))).json;
  }

  /**
   * submitImage posts one capture: side is "front", "back" or "passport" for a document,
   * undefined for the selfie; signals are sent as client.<name> parts.
   */
  async submitImage(step: string, image: Blob, signals: Record<string, string>): Promise<CaptureResult> {
    const form = new FormData();
    const side = sideOf(step);
    if (side) form.append("side", side);
    form.append("image", image, image.type === "image/png" ? "capture.png" : "capture.jpg");
    for (const [k, v] of Object.entries(signals)) form.append(`client.${k}`, v);
    const path = step === "selfie" ? "/selfie" : "/document";
    return (await this.call<CaptureResult>("POST", this.url(path), form)).json;
  }

  /** handoff asks for a link that lets a phone do the chip step. */
  async handoff(): Promise<Handoff> {
    return (await this.call<Handoff>("POST", this.url("/handoff"))).json;
  }
}

/** sideOf maps an image step to the document endpoint's side ("" for the selfie). */
export function sideOf(step: string): string {
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

/** stepOrder is the order the SDK takes the steps in, whatever order they are given in. */
export const stepOrder = ["document_front", "document_back", "passport", "nfc", "selfie"];

/** orderSteps keeps the known steps of steps in stepOrder. */
export function orderSteps(steps: Iterable<string>): string[] {
  const set = new Set(steps);
  return stepOrder.filter((s) => set.has(s));
}
