package proxy

import "net/http"

// servePage writes the live page: self-contained HTML whose inline script
// polls /recoil/state once a second. Nothing is fetched from elsewhere. Like
// the gateway's page, it states what was counted and does not grade it.
func servePage(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'")
	_, _ = w.Write([]byte(page))
}

const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>recoil proxy — what it sent, and what it refused</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5rem; color: #1f2933; background: #fff; max-width: 64rem; }
h1 { font-size: 1.2rem; margin: 0 0 .25rem; }
h2 { font-size: 1rem; margin: 1.2rem 0 .3rem; }
p.note { color: #52606d; margin: 0 0 1rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 0 0 .5rem; }
dt { color: #52606d; }
dd { margin: 0; font-variant-numeric: tabular-nums; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
td, th { padding: .15rem .7rem; text-align: right; border-bottom: 1px solid #eef0f2; }
th { color: #52606d; font-weight: normal; }
td:first-child, th:first-child { text-align: left; }
.bar { display: inline-block; height: .7rem; background: #2f5f8a; vertical-align: middle; }
.bar.refused { background: #7b8794; }
</style>
</head>
<body>
<h1>recoil proxy — what it sent, and what it refused</h1>
<p class="note">Counted at the proxy: each call a client made, each attempt the proxy sent to a provider on its behalf,
and each retry an SDK sent anyway that the proxy answered itself because its request's budget was spent.</p>
<dl>
<dt>up</dt><dd id="uptime">–</dd>
<dt>fleet</dt><dd id="fleet">–</dd>
<dt>failed requests remembered</dt><dd id="ledger">–</dd>
</dl>
<div id="routes"></div>
<div id="clientbox" hidden><h2>clients</h2>
<table id="clients"><tr><th>client</th><th>over its allowance</th></tr></table></div>
<p class="note">JSON: <a href="state">state</a> · Prometheus: <a href="../metrics">metrics</a></p>
<script>
"use strict";
function cell(tr, v, tag) { const c = document.createElement(tag || "td"); c.textContent = v; tr.appendChild(c); return c; }
function bar(n, max, cls) {
  const s = document.createElement("span"); s.className = "bar" + (cls ? " " + cls : "");
  s.style.width = (max > 0 ? Math.round(160 * n / max) : 0) + "px"; return s;
}
function render(st) {
  document.getElementById("uptime").textContent = st.uptime;
  document.getElementById("fleet").textContent = !st.fleet ? "none: allowances and budgets in this process" :
    (st.fleet_shared ? "shared through Redis" : "Redis unreachable: deciding from this replica's local share");
  document.getElementById("ledger").textContent = st.remembered_failures;
  const root = document.getElementById("routes"); root.textContent = "";
  for (const r of st.routes) {
    const h = document.createElement("h2"); h.textContent = "route " + r.name; root.appendChild(h);
    const dl = document.createElement("dl");
    const rows = [["calls", r.calls], ["answered with a failure", r.failed], ["attempts sent to providers", r.attempts],
      ["calls the proxy retried or moved", r.retried], ["SDK retries that arrived", r.sdk_retries],
      ["SDK retries refused (the storm not passed on)", r.storm_refused]];
    if (r.allowance_limit) rows.push(["allowance per window", r.allowance_limit + (r.allowance_shared ? " (shared)" : " (local share)")]);
    const max = Math.max(r.attempts, r.storm_refused, 1);
    for (const [k, v] of rows) {
      const dt = document.createElement("dt"); dt.textContent = k; dl.appendChild(dt);
      const dd = document.createElement("dd"); dd.textContent = v + " ";
      if (k.startsWith("attempts")) dd.appendChild(bar(v, max));
      if (k.startsWith("SDK retries refused")) dd.appendChild(bar(v, max, "refused"));
      dl.appendChild(dd);
    }
    root.appendChild(dl);
    const t = document.createElement("table");
    const hr = document.createElement("tr"); t.appendChild(hr);
    for (const c of ["target", "region", "attempts", "", "cool-down left"]) cell(hr, c, "th");
    const tmax = Math.max(1, ...r.targets.map(x => x.attempts));
    for (const x of r.targets) {
      const tr = document.createElement("tr"); t.appendChild(tr);
      cell(tr, x.name); cell(tr, x.region || "–"); cell(tr, x.attempts);
      cell(tr, "").appendChild(bar(x.attempts, tmax));
      cell(tr, x.out ? "out until restored" : (x.cooling_s > 0 ? x.cooling_s.toFixed(1) + " s" : "–"));
    }
    root.appendChild(t);
  }
  const ct = document.getElementById("clients");
  while (ct.rows.length > 1) ct.deleteRow(1);
  for (const c of st.clients || []) { const tr = ct.insertRow(); cell(tr, c.name); cell(tr, c.refused); }
  document.getElementById("clientbox").hidden = !(st.clients && st.clients.length);
}
async function poll() {
  try { const r = await fetch("state", {cache: "no-store"}); if (r.ok) render(await r.json()); } catch (e) {}
  setTimeout(poll, 1000);
}
poll();
</script>
</body>
</html>
`
