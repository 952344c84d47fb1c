package gateway

import "net/http"

// servePage writes the live page: self-contained HTML whose inline script
// polls /stats and draws the attempts per window in inline SVG. Nothing is
// fetched from elsewhere. The page states what was counted and does not
// grade it: no verdict, no colour that judges (a screen that says
// "healthy" in green can lie).
func servePage(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'")
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write([]byte(page))
}

// page is the live page. Its colours are neutral greys and one blue: they
// tell the two series apart and nothing else.
const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>recoil gateway — what arrived</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5rem; color: #1f2933; background: #fff; max-width: 60rem; }
h1 { font-size: 1.2rem; margin: 0 0 .25rem; }
p.note { color: #52606d; margin: 0 0 1rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 0 0 1rem; }
dt { color: #52606d; }
dd { margin: 0; font-variant-numeric: tabular-nums; }
svg { width: 100%; height: auto; border: 1px solid #d9dee3; background: #fafbfc; }
svg text { font: 11px system-ui, sans-serif; fill: #52606d; }
.legend .swatch { display: inline-block; width: .8rem; height: .8rem; vertical-align: middle; margin: 0 .3rem 0 1rem; }
p.idle { font-weight: 600; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin-top: .5rem; }
td, th { padding: .1rem .6rem; text-align: right; border-bottom: 1px solid #eef0f2; }
th { color: #52606d; font-weight: normal; }
</style>
</head>
<body>
<h1>recoil gateway — what arrived</h1>
<p class="note">Counted on the receiving side: every attempt that reached this gateway, retries included.
This page reports the counts. It does not judge them.</p>
<p class="idle" id="status">Waiting for the first attempt: the counts, the windows and the outages all start from it.</p>
<dl>
<dt>attempts</dt><dd id="attempts">–</dd>
<dt>answered with a success</dt><dd id="accepted">–</dd>
<dt>peak in any <span class="win">200</span> ms</dt><dd id="peak">–</dd>
<dt>clients · logical requests</dt><dd id="keys">–</dd>
<dt>answered by</dt><dd id="faults">–</dd>
<dt>charges (<span id="chargepath">/v1/charges</span>) · double effects</dt><dd id="charges">–</dd>
<dt>outages</dt><dd id="outages">–</dd>
<dt>since the first attempt</dt><dd id="elapsed">–</dd>
</dl>
<div class="legend">attempts per <span class="win">200</span> ms window (fixed windows from the first attempt):
<span class="swatch" style="background:#7b8794"></span>attempts <span class="swatch" style="background:#2f5f8a"></span>answered with a success</div>
<svg id="chart" viewBox="0 0 640 220" role="img" aria-label="attempts per window"></svg>
<div id="axis" class="note"></div>
<table id="numbers"><tr><th>attempt number (Recoil-Attempt)</th></tr><tr><th>attempts</th></tr></table>
<p class="note">The peak is a sliding window: the most attempts whose arrival, to the millisecond, falls within any
<span class="win">200</span> ms span. The chart's bars are fixed windows, so a bar can be lower than the peak.
JSON: <a href="stats">stats</a> · Prometheus: <a href="metrics">metrics</a></p>
<script>
"use strict";
const NS = "http://www.w3.org/2000/svg";
function text(id, v) { document.getElementById(id).textContent = v; }
function ms(v) { return v >= 10000 ? (v / 1000).toFixed(1) + " s" : Math.round(v) + " ms"; }
// nice rounds a chart's top up to a round number (1, 1.5, 2, 2.5, 3, 4, 5,
// 6 or 8 times a power of ten), so the y scale reads in round numbers.
function nice(v) {
  const p = Math.pow(10, Math.floor(Math.log10(Math.max(v, 1))));
  for (const m of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}
function el(name, attrs, content) {
  const e = document.createElementNS(NS, name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (content !== undefined) e.textContent = content;
  return e;
}
// Chart geometry, in viewBox units: the plot area right of the y scale.
const X0 = 44, X1 = 632, Y0 = 8, Y1 = 196;
function render(s) {
  for (const e of document.querySelectorAll(".win")) e.textContent = Math.round(s.window_ms);
  const st = document.getElementById("status");
  st.textContent = s.started ? "" : "Waiting for the first attempt: the counts, the windows and the outages all start from it.";
  st.hidden = !!s.started;
  text("attempts", s.attempts);
  text("accepted", s.accepted);
  text("peak", s.attempts ? s.peak.attempts + " attempts, in the span from " + ms(s.peak.start_ms) : "none yet");
  text("keys", Object.keys(s.clients || {}).length + " · " + s.logical_requests);
  const f = s.faults || {};
  text("faults", Object.keys(f).sort().map(k => k + " " + f[k]).join(" · ") || (s.attempts ? "–" : "nothing yet"));
  const c = s.charges || {};
  text("chargepath", c.path || "/v1/charges");
  text("charges", (c.effects || 0) + " charges · " + (c.duplicates || 0) + " beyond the first of their logical request, " +
    (c.requests_charged_more_than_once || 0) + " logical requests charged more than once · " + (c.dropped_after_charge || 0) +
    " connections dropped after the charge" + (c.idempotency ? " · Idempotency-Key honoured" : ""));
  text("outages", (s.outages || []).map(o => ms(o.start_ms) + " – " +
    (o.ended ? ms(o.end_ms) : (o.recovery ? "(ends once load stays below " + o.recovery.below + " per window for " + ms(o.recovery.for_ms) + ")" : ms(o.start_ms + o.duration_ms))) +
    " · " + o.status + (o.active ? " · answering now" : "")).join("; ") || "none");
  text("elapsed", s.started ? ms(s.elapsed_ms) : "no attempt yet");
  const svg = document.getElementById("chart");
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const ser = s.series || [];
  const tallest = Math.max(0, ...ser.map(w => w.attempts));
  const top = nice(tallest);
  // The y scale: 0, half and the top, whole numbers, with grid lines.
  for (const v of [0, top / 2, top]) {
    if (v !== Math.round(v)) continue;
    const y = Y1 - (Y1 - Y0) * v / top;
    svg.appendChild(el("line", { x1: X0, x2: X1, y1: y, y2: y, stroke: "#d9dee3", "stroke-width": 1 }));
    svg.appendChild(el("text", { x: X0 - 6, y: y + 4, "text-anchor": "end", class: "ytick" }, String(v)));
  }
  svg.appendChild(el("text", { x: X0, y: 214, class: "xlabel" },
    ser.length ? "windows of " + Math.round(s.window_ms) + " ms, oldest left" : "no window yet"));
  const bw = (X1 - X0) / Math.max(ser.length, 1);
  ser.forEach((w, i) => {
    for (const [v, c] of [[w.attempts, "#7b8794"], [w.accepted, "#2f5f8a"]]) {
      if (!v) continue;
      const h = (Y1 - Y0) * v / top;
      const r = el("rect", { x: X0 + i * bw, width: Math.max(bw - 1, 1), y: Y1 - h, height: h, fill: c });
      r.appendChild(el("title", {}, ms(w.start_ms) + ": " + w.attempts + " attempts, " + w.accepted + " successes"));
      svg.appendChild(r);
    }
  });
  text("axis", ser.length ? "from " + ms(ser[0].start_ms) + " to " + ms(ser[ser.length - 1].start_ms + s.window_ms) + "; tallest bar " + tallest + " attempts" : "");
  const tab = document.getElementById("numbers");
  const [head, row] = tab.rows;
  while (head.cells.length > 1) head.deleteCell(1);
  while (row.cells.length > 1) row.deleteCell(1);
  (s.attempt_numbers || []).forEach((n, i, a) => {
    head.insertCell().textContent = i === a.length - 1 ? (i + 1) + "+" : (i + 1);
    row.insertCell().textContent = n;
  });
}
async function tick() {
  try {
    const r = await fetch("stats?series=150", { cache: "no-store" });
    if (r.ok) render(await r.json());
  } catch (e) { /* the gateway stopped; keep the last counts on screen */ }
}
tick();
setInterval(tick, 500);
</script>
</body>
</html>
`
