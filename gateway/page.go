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
svg { width: 100%; height: 220px; border: 1px solid #d9dee3; background: #fafbfc; }
.legend span { display: inline-block; width: .8rem; height: .8rem; vertical-align: middle; margin: 0 .3rem 0 1rem; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin-top: .5rem; }
td, th { padding: .1rem .6rem; text-align: right; border-bottom: 1px solid #eef0f2; }
th { color: #52606d; font-weight: normal; }
</style>
</head>
<body>
<h1>recoil gateway — what arrived</h1>
<p class="note">Counted on the receiving side: every attempt that reached this gateway, retries included.
This page reports the counts. It does not judge them.</p>
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
<span style="background:#7b8794"></span>attempts <span style="background:#2f5f8a"></span>answered with a success</div>
<svg id="chart" viewBox="0 0 600 200" preserveAspectRatio="none" role="img" aria-label="attempts per window"></svg>
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
function render(s) {
  for (const e of document.querySelectorAll(".win")) e.textContent = Math.round(s.window_ms);
  text("attempts", s.attempts);
  text("accepted", s.accepted);
  text("peak", s.attempts ? s.peak.attempts + " attempts, in the span from " + ms(s.peak.start_ms) : "–");
  text("keys", Object.keys(s.clients || {}).length + " · " + s.logical_requests);
  const f = s.faults || {};
  text("faults", Object.keys(f).sort().map(k => k + " " + f[k]).join(" · ") || "–");
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
  const top = Math.max(1, ...ser.map(w => w.attempts));
  const bw = 600 / Math.max(ser.length, 1);
  ser.forEach((w, i) => {
    for (const [v, c] of [[w.attempts, "#7b8794"], [w.accepted, "#2f5f8a"]]) {
      if (!v) continue;
      const r = document.createElementNS(NS, "rect");
      const h = 190 * v / top;
      r.setAttribute("x", i * bw); r.setAttribute("width", Math.max(bw - 1, 1));
      r.setAttribute("y", 200 - h); r.setAttribute("height", h); r.setAttribute("fill", c);
      const t = document.createElementNS(NS, "title");
      t.textContent = ms(w.start_ms) + ": " + w.attempts + " attempts, " + w.accepted + " successes";
      r.appendChild(t); svg.appendChild(r);
    }
  });
  text("axis", ser.length ? "from " + ms(ser[0].start_ms) + " to " + ms(ser[ser.length - 1].start_ms + s.window_ms) + "; tallest bar " + top + " attempts" : "");
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
