// The back office's analyst views (GET /v1/review/analytics): the tenant's sessions per day
// and their pass rate, why sessions were rejected, the time each step takes, the review
// backlog and what each reviewer decided, fraud signals over time and the reviewers' views of
// personal data. Each chart is an SVG drawn from attributes only (the page's CSP allows no
// inline style) and is followed by the table of its figures, which screen readers read.

import { h } from "./dom";

export interface AnalyticsView {
  from: string;
  to: string;
  days: number;
  backlog: { cases: number; oldest_age_seconds: number };
  report: {
    days: { day: string; flow: string; sessions: number; verified: number; rejected: number; expired: number }[];
    reject_reasons: { code: string; sessions: number }[];
    steps: { flow: string; sessions: number; steps: { name: string; p50_ms: number | null; p90_ms: number | null }[] }[];
    reviewers: { day: string; reviewer_id: string; verified: number; rejected: number }[];
    fraud_signals: { day: string; check: string; failed: number; warned: number }[];
    views: { reviewer_id: string; views: number; sessions: number }[];
  };
}

const colours = { verified: "#1a7f37", rejected: "#b42318", expired: "#6b7280", failed: "#b42318", warned: "#b54708" };

const svgNS = "http://www.w3.org/2000/svg";

function svg(tag: string, attrs: Record<string, string | number>, ...children: (Node | string)[]): SVGElement {
  const el = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  el.append(...children);
  return el;
}

interface Series {
  name: keyof typeof colours;
  values: number[];
}

/** stackedBars draws one stacked bar per label (a day), with a legend. */
function stackedBars(title: string, labels: string[], series: Series[]): SVGElement {
  const width = 720, height = 220, left = 40, bottom = 40, top = 24;
  const totals = labels.map((_, i) => series.reduce((s, x) => s + x.values[i], 0));
  const max = Math.max(1, ...totals);
  const slot = (width - left - 10) / Math.max(1, labels.length);
  const bar = Math.max(4, Math.min(40, slot * 0.7));
  const scale = (height - bottom - top) / max;
  const parts: Node[] = [svg("title", {}, title)];
  parts.push(svg("line", { x1: left, y1: height - bottom, x2: width - 10, y2: height - bottom, stroke: "#3d4a5c" }));
  parts.push(svg("text", { x: left - 6, y: top + 4, "text-anchor": "end", "font-size": 11, fill: "#3d4a5c" }, String(max)));
  parts.push(svg("text", { x: left - 6, y: height - bottom, "text-anchor": "end", "font-size": 11, fill: "#3d4a5c" }, "0"));
  labels.forEach((label, i) => {
    const x = left + i * slot + (slot - bar) / 2;
    let y = height - bottom;
    for (const s of series) {
      const hgt = s.values[i] * scale;
      if (hgt > 0) {
        y -= hgt;
        parts.push(svg("rect", { x, y, width: bar, height: hgt, fill: colours[s.name] }, svg("title", {}, `${label} ${s.name}: ${s.values[i]}`)));
      }
    }
    if (labels.length <= 31 && (labels.length <= 14 || i % 2 === 0)) {
      parts.push(svg("text", { x: x + bar / 2, y: height - bottom + 14, "text-anchor": "middle", "font-size": 11, fill: "#3d4a5c" }, label.slice(5)));
    }
  });
  series.forEach((s, i) => {
    const x = left + i * 110;
    parts.push(svg("rect", { x, y: height - 14, width: 12, height: 12, fill: colours[s.name] }));
    parts.push(svg("text", { x: x + 16, y: height - 4, "font-size": 12, fill: "#1a1a1a" }, s.name));
  });
  return svg("svg", { viewBox: `0 0 ${width} ${height}`, width: "100%", role: "img", "aria-label": title, class: "bo-chart" }, ...parts);
}

/** horizontalBars draws one bar per label, longest first as given. */
function horizontalBars(title: string, rows: { label: string; value: number }[], colour: string): SVGElement {
  const width = 720, row = 22, left = 260;
  const height = Math.max(1, rows.length) * row + 8;
  const max = Math.max(1, ...rows.map((r) => r.value));
  const parts: Node[] = [svg("title", {}, title)];
  rows.forEach((r, i) => {
    const y = 4 + i * row;
    const w = ((width - left - 60) * r.value) / max;
    parts.push(svg("text", { x: left - 8, y: y + 15, "text-anchor": "end", "font-size": 12, fill: "#1a1a1a" }, r.label));
    parts.push(svg("rect", { x: left, y: y + 3, width: Math.max(1, w), height: row - 8, fill: colour }));
    parts.push(svg("text", { x: left + w + 6, y: y + 15, "font-size": 12, fill: "#1a1a1a" }, String(r.value)));
  });
  return svg("svg", { viewBox: `0 0 ${width} ${height}`, width: "100%", role: "img", "aria-label": title, class: "bo-chart" }, ...parts);
}

function table(caption: string, head: string[], rows: (string | number)[][], cls = ""): HTMLElement {
  if (!rows.length) return h("p", { class: "bo-empty" }, `${caption}: none in this period.`);
  return h(
    "table",
    { class: `bo-table ${cls}` },
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, ...head.map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, ...rows.map((r) => h("tr", {}, ...r.map((c) => h("td", {}, String(c)))))),
  );
}

function seconds(ms: number | null): string {
  return ms === null ? "—" : (ms / 1000).toFixed(ms < 10000 ? 1 : 0);
}

function percent(n: number, of: number): string {
  return of ? `${Math.round((100 * n) / of)} %` : "—";
}

function ageText(s: number): string {
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

const stepNames: Record<string, string> = {
  open_to_first_capture: "open → first capture",
  capturing: "capturing",
  first_capture_to_ocr: "first capture → documents read",
  captured_to_liveness: "captured → liveness",
  captured_to_decision: "captured → decision",
};

/** renderAnalytics returns the analyst views' sections, in reading order. */
export function renderAnalytics(v: AnalyticsView): HTMLElement[] {
  const r = v.report;
  const days: string[] = [];
  for (let t = Date.parse(v.from), end = Date.parse(v.to); t < end; t += 86400000) days.push(new Date(t).toISOString().slice(0, 10));
  const perDay = (pick: "verified" | "rejected" | "expired") => days.map((d) => r.days.filter((x) => x.day === d).reduce((s, x) => s + x[pick], 0));
  const ended = r.days.reduce((s, x) => s + x.sessions, 0);
  const verified = r.days.reduce((s, x) => s + x.verified, 0);
  const decidedByPeople = r.reviewers.reduce((s, x) => s + x.verified + x.rejected, 0);
  const fraudTotals = new Map<string, number>();
  for (const f of r.fraud_signals) fraudTotals.set(f.check, (fraudTotals.get(f.check) ?? 0) + f.failed + f.warned);

  const summary = h(
    "section",
    { class: "bo-kpis", "aria-label": "Summary" },
    ...[
      ["Sessions ended", String(ended)],
      ["Verified", percent(verified, ended)],
      ["Decided by a reviewer", String(decidedByPeople)],
      ["In review now", String(v.backlog.cases)],
      ["Oldest case", v.backlog.cases ? ageText(v.backlog.oldest_age_seconds) : "—"],
    ].map(([k, val]) => h("div", { class: "bo-kpi" }, h("span", { class: "bo-kpi-value" }, val), h("span", {}, k))),
  );
  const section = (title: string, ...content: Node[]) => h("section", { class: "bo-panel", "aria-label": title }, h("h3", {}, title), ...content);
  return [
    summary,
    section(
      "Sessions per day",
      stackedBars("Sessions ended per day: verified, rejected, expired", days, [
        { name: "verified", values: perDay("verified") },
        { name: "rejected", values: perDay("rejected") },
        { name: "expired", values: perDay("expired") },
      ]),
      table(
        "Pass rate by flow and day",
        ["Day", "Flow", "Sessions", "Verified", "Rejected", "Expired", "Pass rate"],
        r.days.map((d) => [d.day, d.flow, d.sessions, d.verified, d.rejected, d.expired, percent(d.verified, d.sessions)]),
        "bo-days",
      ),
    ),
    section(
      "Why sessions were rejected",
      ...(r.reject_reasons.length ? [horizontalBars("Rejection reasons", r.reject_reasons.map((x) => ({ label: x.code, value: x.sessions })), colours.rejected)] : []),
      table("Rejection reasons", ["Reason", "Sessions"], r.reject_reasons.map((x) => [x.code, x.sessions]), "bo-reasons"),
    ),
    section(
      "Time per step (seconds, median / 90th percentile)",
      table(
        "Time per step by flow",
        ["Flow", "Sessions", ...Object.values(stepNames)],
        r.steps.map((f) => [f.flow, f.sessions, ...Object.keys(stepNames).map((n) => {
          const st = f.steps.find((x) => x.name === n);
          return st ? `${seconds(st.p50_ms)} / ${seconds(st.p90_ms)}` : "—";
        })]),
        "bo-steps",
      ),
    ),
    section(
      "Reviewers",
      table("Decided by reviewers per day", ["Day", "Reviewer", "Verified", "Rejected"], r.reviewers.map((x) => [x.day, x.reviewer_id, x.verified, x.rejected]), "bo-reviewers"),
      table("Views of personal data", ["Reviewer", "Views", "Sessions"], r.views.map((x) => [x.reviewer_id, x.views, x.sessions]), "bo-views"),
    ),
    section(
      "Fraud signals",
      ...(fraudTotals.size ? [horizontalBars("Fraud checks failed or warned", [...fraudTotals].sort((a, b) => b[1] - a[1]).map(([label, value]) => ({ label, value })), colours.warned)] : []),
      table("Fraud checks failed or warned per day", ["Day", "Check", "Failed", "Warned"], r.fraud_signals.map((x) => [x.day, x.check, x.failed, x.warned]), "bo-fraud"),
    ),
  ];
}
