// The reviewers' back office (GET /v1/review/ui on the edge): the review queue, a case with
// its pictures (zoomable) next to the data each source read (disagreements marked), every
// check with its score and threshold, the case's history, and the decision or a request that
// the person take one step again, with keyboard
// shortcuts (c claim; a approve and r reject, each pressed twice to confirm; Escape back to
// the queue), which a checkbox turns off (WCAG 2.1.4); and the tenant's analyst views
// (analytics.ts). It calls the review API with the
// reviewer's key, which it keeps for the tab only (sessionStorage).

import { type AnalyticsView, renderAnalytics } from "./analytics";
import { button, h, replace } from "./dom";

interface Reason {
  code: string;
  message: string;
}

interface Case {
  session_id: string;
  flow: string;
  opened_at: string;
  age_seconds: number;
  policy_version: string;
  reasons: Reason[];
  claimed_by: string | null;
  claim_expires_at: string | null;
  decided: boolean;
  awaiting_retake: string | null;
}

interface Check {
  name: string;
  status: string;
  score: number | null;
  threshold: number | null;
  reason_code: string | null;
}

interface CaseDetail extends Case {
  session: { status: string; checks: Check[] };
  retake_steps: string[];
  history: { kind: string; reviewer_id: string | null; at: string; detail: string | null }[];
  decision: { reviewer_id: string; outcome: string; reason_code: string; note: string | null; decided_at: string } | null;
  images: { kind: string; step: string; name: string; url: string }[];
  sources: { source: string; fields: Record<string, string> }[];
}

class Problem extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const keyStore = "idstream.reviewer_key";
const shortcutsStore = "idstream.shortcuts";

class BackOffice {
  private key = sessionStorage.getItem(keyStore) ?? "";
  private readonly main: HTMLElement;
  private readonly status: HTMLElement;
  private readonly header: HTMLElement;
  private current: CaseDetail | null = null;
  private busy = false; // one action at a time: a repeated key or click waits for the first
  private armed: { key: string; until: number } | null = null; // a/r pressed once
  private shortcuts = sessionStorage.getItem(shortcutsStore) !== "off";
  private readonly onKey = (e: KeyboardEvent) => this.shortcut(e);

  constructor(private readonly root: HTMLElement) {
    this.main = h("main", { class: "bo-main", "aria-label": "Review" });
    this.status = h("p", { class: "bo-status", role: "status", "aria-live": "polite" });
    this.header = h("header", { class: "bo-header" });
    root.replaceChildren(this.header, this.status, this.main);
    this.renderHeader();
    document.addEventListener("keydown", this.onKey);
  }

  private renderHeader(): void {
    const toggle = h("input", { id: "bo-shortcuts", type: "checkbox" });
    toggle.checked = this.shortcuts;
    toggle.addEventListener("change", () => {
      this.shortcuts = toggle.checked;
      sessionStorage.setItem(shortcutsStore, toggle.checked ? "on" : "off");
    });
    replace(
      this.header,
      h("h1", {}, "idstream review"),
      this.key
        ? h(
            "div",
            { class: "bo-actions" },
            button("bo-link bo-nav-queue", "Queue", () => void this.queue()),
            button("bo-link bo-nav-analytics", "Analytics", () => void this.analytics()),
            h("label", { for: "bo-shortcuts" }, toggle, " Keyboard shortcuts"),
            button("bo-secondary bo-signout", "Sign out", () => this.signOut()),
          )
        : null,
    );
  }

  start(): void {
    if (this.key) void this.queue();
    else this.signIn();
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(path, {
      method,
      headers: { Authorization: `Bearer ${this.key}`, ...(body ? { "Content-Type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      credentials: "omit",
      cache: "no-store",
    });
    if (res.status === 204) return undefined as T;
    const json = await res.json().catch(() => ({}));
    if (!res.ok) throw new Problem(json.code ?? "other", res.status, json.detail ?? `HTTP ${res.status}`);
    return json as T;
  }

  private say(text: string, error = false): void {
    this.status.textContent = text;
    this.status.classList.toggle("bo-error", error);
  }

  private signIn(): void {
    this.current = null;
    this.root.dataset.view = "signin";
    const input = h("input", { id: "bo-key", type: "password", autocomplete: "off", class: "bo-input", required: "" });
    const form = h("form", { class: "bo-signin" }, h("label", { for: "bo-key" }, "Reviewer key"), input, h("button", { type: "submit", class: "bo-primary" }, "Sign in"));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.key = input.value.trim();
      sessionStorage.setItem(keyStore, this.key);
      this.renderHeader();
      void this.queue();
    });
    replace(this.main, h("h2", {}, "Sign in"), form);
    input.focus();
  }

  private signOut(): void {
    sessionStorage.removeItem(keyStore);
    this.key = "";
    location.reload();
  }

  private fail(e: unknown): void {
    if (e instanceof Problem && this.current && (e.status === 409 || e.status === 404)) {
      // The case moved on (claimed by another, decided, erased): show it as it is now.
      const id = this.current.session_id;
      this.say(e.message, true);
      void (e.status === 409 ? this.open(id) : this.queue());
      return;
    }
    if (e instanceof Problem && (e.status === 401 || e.status === 403)) {
      sessionStorage.removeItem(keyStore);
      this.key = "";
      this.renderHeader();
      this.say("This key is not a reviewer key.", true);
      this.signIn();
      return;
    }
    this.say(e instanceof Error ? e.message : String(e), true);
  }

  private async queue(filter = "any"): Promise<void> {
    this.current = null;
    let q: { cases: Case[]; total: number };
    try {
      q = await this.call("GET", `/v1/review/cases?claimed=${encodeURIComponent(filter)}`);
    } catch (e) {
      this.fail(e);
      return;
    }
    this.root.dataset.view = "queue";
    const select = choice("bo-filter", [["any", "All cases"], ["unclaimed", "Unclaimed"], ["mine", "Mine"]], filter);
    select.addEventListener("change", () => void this.queue(select.value));
    const rows = q.cases.map((c) =>
      h(
        "tr",
        { "data-session": c.session_id },
        h("td", {}, button("bo-link bo-open", c.session_id, () => void this.open(c.session_id))),
        h("td", {}, c.flow),
        h("td", { class: c.age_seconds > 3600 ? "bo-late" : "" }, age(c.age_seconds)),
        h("td", {}, c.reasons.map((r) => r.code).join(", ")),
        h("td", {}, c.claimed_by ?? "—"),
      ),
    );
    const heading = h("h2", { tabindex: "-1" }, `Queue (${q.total})`);
    replace(
      this.main,
      heading,
      h("p", {}, h("label", { for: "bo-filter" }, "Show "), select, " ", button("bo-secondary", "Refresh", () => void this.queue(select.value))),
      rows.length
        ? h(
            "table",
            { class: "bo-table bo-queue" },
            h("caption", {}, "Cases waiting for a decision, oldest first"),
            h("thead", {}, h("tr", {}, ...["Session", "Flow", "Age", "Why", "Claimed by"].map((t) => h("th", { scope: "col" }, t)))),
            h("tbody", {}, ...rows),
          )
        : h("p", { class: "bo-empty" }, "No case is waiting."),
    );
    this.say(`${q.total} case(s) in review.`);
    heading.focus();
  }

  private async open(id: string): Promise<void> {
    let d: CaseDetail;
    try {
      d = await this.call("GET", `/v1/review/cases/${encodeURIComponent(id)}`);
    } catch (e) {
      this.fail(e);
      return;
    }
    this.current = d;
    this.armed = null;
    this.root.dataset.view = "case";
    this.root.dataset.claimedBy = d.claimed_by ?? "";
    const images = h("section", { class: "bo-images", "aria-label": "Pictures" });
    d.images.forEach((im, i) => {
      const img = h("img", { src: im.url, class: "bo-img" });
      const zoom = h("button", { type: "button", class: "bo-zoom", "aria-pressed": "false" }, img);
      zoom.addEventListener("click", () => {
        const on = img.classList.toggle("bo-zoomed");
        zoom.setAttribute("aria-pressed", String(on));
      });
      const what = im.kind === "document_face" ? `face on ${im.step}` : im.kind === "chip_portrait" ? "chip portrait (DG2)" : im.step;
      img.alt = `${what}, picture ${i + 1} of ${d.images.length}`;
      images.append(h("figure", {}, zoom, h("figcaption", {}, `${what} (press to zoom)`)));
    });
    if (!d.images.length) images.append(h("p", {}, "No pictures (erased or none captured)."));

    const reason = h("input", { id: "bo-reason", class: "bo-input", value: "", placeholder: "e.g. live_person", pattern: "[a-z0-9_]{1,64}" });
    const note = h("textarea", { id: "bo-note", class: "bo-input", rows: "3", maxlength: "2000" });
    const captured = d.retake_steps ?? [];
    const retakeStep = h("select", { id: "bo-retake-step", class: "bo-input" }, ...captured.map((st) => h("option", { value: st }, st)));
    const decide = h(
      "section",
      { class: "bo-decide", "aria-label": "Decision" },
      h("h3", {}, "Decision"),
      d.decision
        ? h("p", { class: "bo-decided" }, `${d.decision.outcome} by ${d.decision.reviewer_id} (${d.decision.reason_code})${d.decision.note ? ": " + d.decision.note : ""}`)
        : d.awaiting_retake
        ? h("p", { class: "bo-awaiting" }, `Waiting for the person to take ${d.awaiting_retake} again. The case returns to the queue when they have.`)
        : h(
            "div",
            {},
            h("p", {}, d.claimed_by ? `Claimed by ${d.claimed_by} until ${d.claim_expires_at}` : "Not claimed."),
            h("div", { class: "bo-actions" }, button("bo-secondary bo-claim", "Claim (c)", () => void this.act("claim")), button("bo-secondary bo-release", "Release", () => void this.act("release"))),
            h("label", { for: "bo-reason" }, "Reason code"),
            reason,
            h("label", { for: "bo-note" }, "Note (seen by reviewers only)"),
            note,
            h("div", { class: "bo-actions" }, button("bo-primary bo-approve", "Approve (a a)", () => void this.decide("verified")), button("bo-danger bo-reject", "Reject (r r)", () => void this.decide("rejected"))),
            ...(captured.length
              ? [
                  h("label", { for: "bo-retake-step" }, "Or ask the person to take a step again (the reason code and note above go with it; the note stays internal)"),
                  h("div", { class: "bo-actions" }, retakeStep, button("bo-secondary bo-retake", "Ask for a retake", () => void this.retake())),
                ]
              : []),
          ),
    );
    const heading = h("h2", { tabindex: "-1" }, `Case ${d.session_id}`);
    replace(
      this.main,
      h("p", {}, button("bo-link bo-back", "← Queue (Esc)", () => void this.queue())),
      heading,
      h("p", {}, `${d.flow} · in review for ${age(d.age_seconds)} · policy ${d.policy_version} · ${d.reasons.map((r) => r.message).join(" ")}`),
      h("div", { class: "bo-grid" }, images, h("div", {}, decide, sourcesTable(d.sources), checksTable(d.session.checks), historyList(d.history))),
    );
    heading.focus();
  }

  /**
   * post sends one action on the open case (claim, release, decision, retake), says how it
   * went (done sees the answer's status and gives the words for an answered action) and
   * shows the case again.
   */
  private async post(d: CaseDetail, action: string, body: unknown, done: (status: string | undefined) => string): Promise<void> {
    this.busy = true;
    try {
      const r = await this.call<{ status?: string } | undefined>("POST", `/v1/review/cases/${encodeURIComponent(d.session_id)}/${action}`, body);
      const words = done(r?.status);
      this.say(r?.status === "recorded" ? "Sent; not confirmed yet: look again in a moment." : words);
    } catch (e) {
      this.fail(e);
      return;
    } finally {
      this.busy = false;
    }
    await this.open(d.session_id);
  }

  /** reasonAndNote is the reason code (fallback when none is typed) and note of the form. */
  private reasonAndNote(fallback: string): { reason_code: string; note?: string } {
    const reason = (document.getElementById("bo-reason") as HTMLInputElement | null)?.value.trim() || fallback;
    const note = (document.getElementById("bo-note") as HTMLTextAreaElement | null)?.value.trim();
    return { reason_code: reason, ...(note ? { note } : {}) };
  }

  private async act(what: "claim" | "release"): Promise<void> {
    const d = this.current;
    if (!d || this.busy) return;
    await this.post(d, what, undefined, () => (what === "claim" ? "Claimed." : "Released."));
  }

  private async decide(outcome: "verified" | "rejected"): Promise<void> {
    const d = this.current;
    if (!d || this.busy || d.decision) return;
    await this.post(d, "decision", { outcome, ...this.reasonAndNote(outcome === "verified" ? "approved" : "rejected") }, (status) => {
      this.root.dataset.decided = status ?? "";
      return `Decided: the session is ${status}.`;
    });
  }

  /** analytics shows the tenant's analyst views over the last days. */
  private async analytics(days = 14): Promise<void> {
    this.current = null;
    let v: AnalyticsView;
    try {
      v = await this.call("GET", `/v1/review/analytics?days=${days}`);
    } catch (e) {
      this.fail(e);
      return;
    }
    this.root.dataset.view = "analytics";
    const select = choice("bo-days", [7, 14, 30, 92].map((n) => [String(n), `Last ${n} days`]), String(days));
    select.addEventListener("change", () => void this.analytics(Number(select.value)));
    const heading = h("h2", { tabindex: "-1" }, "Analytics");
    replace(
      this.main,
      heading,
      h("p", {}, h("label", { for: "bo-days" }, "Period "), select, ` · sessions opened from ${v.from.slice(0, 10)} (UTC) · a few seconds behind the pipeline`),
      ...renderAnalytics(v),
    );
    this.say("");
    heading.focus();
  }

  /** retake sends the chosen step back to the person; the case waits for them. */
  private async retake(): Promise<void> {
    const d = this.current;
    if (!d || this.busy || d.decision) return;
    const step = (document.getElementById("bo-retake-step") as HTMLSelectElement | null)?.value;
    if (!step) return;
    await this.post(d, "retake", { step, ...this.reasonAndNote("retake_requested") }, () => `The person is asked to take ${step} again.`);
  }

  private shortcut(e: KeyboardEvent): void {
    const t = e.target as HTMLElement | null;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) return;
    if (e.ctrlKey || e.metaKey || e.altKey || e.repeat || e.isComposing || !this.shortcuts) return;
    if (e.key === "Escape" && this.current) {
      void this.queue();
      return;
    }
    if (!this.current || this.current.decision || this.current.awaiting_retake) return;
    if (e.key === "c") {
      void this.act("claim");
      return;
    }
    if (e.key !== "a" && e.key !== "r") return;
    // A decision takes the same key twice within 3 s: one stray key press decides nothing.
    const now = Date.now();
    if (this.armed?.key === e.key && now < this.armed.until) {
      this.armed = null;
      void this.decide(e.key === "a" ? "verified" : "rejected");
      return;
    }
    this.armed = { key: e.key, until: now + 3000 };
    this.say(`Press ${e.key} again to ${e.key === "a" ? "approve" : "reject"} this case.`);
  }
}

/** choice makes a select of [value, label] options with selected chosen. */
function choice(id: string, options: string[][], selected: string): HTMLSelectElement {
  const select = h("select", { id, class: "bo-input" });
  for (const [value, label] of options) {
    const o = h("option", { value }, label);
    o.selected = value === selected;
    select.append(o);
  }
  return select;
}

function age(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}

/**
 * norm is a value as compared across sources: case, spaces, punctuation and diacritics
 * aside (a machine readable zone spells NGUYỄN as NGUYEN).
 */
function norm(v: string): string {
  return v
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[đĐ]/g, "D")
    .toUpperCase()
    .replace(/[\s<.,-]+/g, " ")
    .trim();
}

function sourcesTable(sources: CaseDetail["sources"]): HTMLElement {
  if (!sources.length) return h("p", {}, "No data read yet.");
  const names = [...new Set(sources.flatMap((s) => Object.keys(s.fields)))].sort();
  const rows = names.map((n) => {
    const values = sources.map((s) => s.fields[n] ?? "");
    const distinct = new Set(values.filter(Boolean).map(norm));
    const differ = distinct.size > 1;
    return h(
      "tr",
      { class: differ ? "bo-differ" : "", "data-field": n },
      h("th", { scope: "row" }, n, differ ? h("span", { class: "bo-flag" }, " ≠ sources disagree") : null),
      ...values.map((v) => h("td", {}, v || "—")),
    );
  });
  return h(
    "table",
    { class: "bo-table bo-sources" },
    h("caption", {}, "What each source read"),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Field"), ...sources.map((s) => h("th", { scope: "col" }, s.source)))),
    h("tbody", {}, ...rows),
  );
}

function checksTable(checks: Check[]): HTMLElement {
  const fmt = (v: number | null) => (v === null ? "—" : v.toFixed(3));
  return h(
    "table",
    { class: "bo-table bo-checks" },
    h("caption", {}, "Checks"),
    h("thead", {}, h("tr", {}, ...["Check", "Status", "Score", "Threshold", "Reason"].map((t) => h("th", { scope: "col" }, t)))),
    h(
      "tbody",
      {},
      ...checks.map((c) =>
        h("tr", { class: `bo-check-${c.status}` }, h("th", { scope: "row" }, c.name), h("td", {}, c.status), h("td", {}, fmt(c.score)), h("td", {}, fmt(c.threshold)), h("td", {}, c.reason_code ?? "")),
      ),
    ),
  );
}

function historyList(history: CaseDetail["history"]): HTMLElement {
  return h(
    "section",
    { class: "bo-history", "aria-label": "History" },
    h("h3", {}, "History"),
    h("ol", {}, ...history.map((a) => h("li", {}, `${a.at} ${a.kind}${a.reviewer_id ? " by " + a.reviewer_id : ""}${a.detail ? " (" + a.detail + ")" : ""}`))),
  );
}

const mount = document.getElementById("backoffice");
if (mount) new BackOffice(mount).start();
