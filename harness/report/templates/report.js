/* onnx-harness report: filters, matrix, case list, drill-down, performance and diff tables.
   The data is columnar (see harness/report/html.py, page_data); tables render a page at a time. */
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("report-data").textContent);
  const S = D.S, OUT = D.outcomes, NO = OUT.length, B = D.backends, NB = B.length;
  // -- decode the compact columns (html.py: _sparse, _deltas, _front_coded, _us) ---------------------
  const expand = (col, n) => {
    if (Array.isArray(col)) return col;
    const out = new Array(n).fill(col.d);
    for (let k = 0, p = 0; k < col.i.length; k++) { p += col.i[k]; out[p] = col.v[k]; }
    return out;
  };
  const cumsum = (a) => { for (let k = 1; k < a.length; k++) a[k] += a[k - 1]; return a; };
  const C = D.cases, R = D.res, P = D.perf, G = D.groups, NG = G.b.length;
  const NC = C.id.p.length, NR = R.b.length;
  C.id = (() => { const ids = new Array(NC); let prev = ""; for (let k = 0; k < NC; k++) { prev = prev.slice(0, C.id.p[k]) + C.id.s[k]; ids[k] = prev; } return ids; })();
  C.x = expand(C.x, NC);
  for (const key of Object.keys(R)) R[key] = expand(R[key], NR);
  cumsum(R.c);
  for (const key of ["pr", "rt", "md", "p9"]) R[key] = R[key].map((v) => (v === null ? null : v / 1e6));
  cumsum(P.c);
  const FAIL = new Set(D.failures.map((o) => OUT.indexOf(o)));
  const XFAIL = OUT.indexOf("xfail");  // a known failure: "failures only" shows it with "known ones included"
  const PASS = new Set(D.passing.map((o) => OUT.indexOf(o)));
  const APART = new Set(D.apart.map((o) => OUT.indexOf(o)));  // counted apart: not in the pass rate
  const PAGE = { matrix: 150, cases: 100, perf: 100, diff: 100 };
  const $ = (id) => document.getElementById(id);
  const str = (i) => (i === undefined || i === null || i < 0 ? "" : S[i]);
  const col = (a, i, dflt) => (a && a.length ? a[i] : dflt);
  const ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ESC[c]);
  const dash = (t) => (t === "-" ? "–" : t);  // a missing key or dtype ("-" in the data) shows as every missing value

  // -- number formatting (the same rules as html.py) -------------------------------------------
  function fmtNum(x) {
    if (x === null || x === undefined) return "–";
    if (typeof x === "string") return x;
    if (Number.isInteger(x)) return x.toLocaleString("en-US");
    const a = Math.abs(x);
    if (a !== 0 && (a < 1e-3 || a >= 1e6)) return x.toExponential(3).replace(/\.?0+e/, "e");
    return String(Number(x.toPrecision(4)));
  }
  function fmtSecs(s) {
    if (s === null || s === undefined) return "–";
    if (s < 1e-3) return Number((s * 1e6).toPrecision(3)) + " µs";
    if (s < 1) return Number((s * 1e3).toPrecision(3)) + " ms";
    return s < 100 ? Number(s.toPrecision(3)) + " s" : Math.round(s).toLocaleString("en-US") + " s";
  }
  const fmtRatio = (x) => (x === null || x === undefined || !isFinite(x) ? "–" : "×" + Number(x.toPrecision(3)));
  const latency = (i) => { const m = col(R.md, i, null); return m !== null && m !== undefined ? m : R.rt[i]; };

  // -- indexes ------------------------------------------------------------------------------------
  const idLower = C.id.map((s) => s.toLowerCase());
  const opLower = C.op.map((i) => str(i).toLowerCase());
  const caseIndex = new Map(C.id.map((id, n) => [id, n]));
  const byCase = new Int32Array(NC * NB).fill(-1);
  for (let i = 0; i < NR; i++) byCase[R.c[i] * NB + R.b[i]] = i;

  // -- state ---------------------------------------------------------------------------------------
  const state = {
    terms: [], outcomes: new Set(OUT.map((_, i) => i)), backends: new Set(B.map((_, i) => i)),
    suite: -1, domain: -1, only: false, fail: false, known: false, view: D.views[0], row: null,
    page: { matrix: 0, cases: 0, perf: 0, diff: 0 }, perfSort: "case",
    kinds: new Set(D.kinds.map((_, i) => i)),
    group: -1, groupBy: "case",  // the case list: one failure group's results only; rows per case or per cause
  };
  let caseMask = new Uint8Array(NC), resMask = new Uint8Array(NR), listMask = new Uint8Array(NR);

  function caseOk(c) {
    if (state.suite >= 0 && C.suite[c] !== state.suite) return false;
    if (state.domain >= 0 && C.dom[c] !== state.domain) return false;
    for (const t of state.terms) if (idLower[c].indexOf(t) < 0 && opLower[c].indexOf(t) < 0) return false;
    return true;
  }
  function compute() {
    for (let c = 0; c < NC; c++) caseMask[c] = caseOk(c) ? 1 : 0;
    const rowView = state.row ? C.views[state.row.view].row : null;
    let shown = 0;
    for (let i = 0; i < NR; i++) {
      const o = R.o[i];
      const ok = caseMask[R.c[i]] && state.backends.has(R.b[i]) && state.outcomes.has(o)
        && (!state.only || col(R.only, i, 0)) && (!state.fail || FAIL.has(o) || (state.known && o === XFAIL));
      resMask[i] = ok ? 1 : 0;
      listMask[i] = ok && (!rowView || (rowView[R.c[i]] === state.row.row && (state.row.backend < 0 || R.b[i] === state.row.backend)))
        && (state.group < 0 || R.g[i] === state.group) ? 1 : 0;
      shown += listMask[i];
    }
    $("shown").textContent = shown.toLocaleString("en-US") + " of " + NR.toLocaleString("en-US") + " results";
  }
  const visibleBackends = () => B.map((_, b) => b).filter((b) => state.backends.has(b));

  // -- pager ---------------------------------------------------------------------------------------
  function pager(name, total, rerender) {
    const el = $(name + "-pager");
    const pages = Math.max(1, Math.ceil(total / PAGE[name]));
    if (state.page[name] >= pages) state.page[name] = pages - 1;
    const p = state.page[name];
    el.innerHTML = total <= PAGE[name] ? (total ? "" : "<span class='muted'>nothing matches the filters</span>") :
      "<button type='button' data-p='0'>«</button><button type='button' data-p='" + (p - 1) + "'" + (p === 0 ? " disabled" : "") + ">‹ prev</button>" +
      "<span>page " + (p + 1) + " of " + pages + " · " + total.toLocaleString("en-US") + " rows</span>" +
      "<button type='button' data-p='" + (p + 1) + "'" + (p >= pages - 1 ? " disabled" : "") + ">next ›</button><button type='button' data-p='" + (pages - 1) + "'>»</button>";
    el.onclick = (ev) => {
      const t = ev.target.closest("button[data-p]");
      if (!t || t.disabled) return;
      state.page[name] = Math.min(pages - 1, Math.max(0, +t.dataset.p));
      rerender();
    };
    return [p * PAGE[name], Math.min(total, (p + 1) * PAGE[name])];
  }

  // -- filters UI ----------------------------------------------------------------------------------
  function buildFilters() {
    const oOpts = $("f-outcome").querySelector(".opts");
    oOpts.innerHTML = "<div class='all'><a data-all='1'>all</a><a data-all='0'>none</a><a data-all='f'>failures</a></div>" +
      OUT.map((o, i) => "<label><input type='checkbox' value='" + esc(o) + "' data-i='" + i + "' checked> <span class='dot' style='background:var(--o-" + o + ")'></span>" + esc(o) + "</label>").join("");
    const bOpts = $("f-backend").querySelector(".opts");
    bOpts.innerHTML = B.map((b, i) => "<label><input type='checkbox' value='" + esc(b.label) + "' data-i='" + i + "' checked> " + esc(b.label) +
      (b.available ? "" : " <span class='muted'>(unavailable)</span>") + "</label>").join("");
    const counts = (arr) => { const m = new Map(); for (const v of arr) m.set(v, (m.get(v) || 0) + 1); return m; };
    for (const [id, arr] of [["f-suite", C.suite], ["f-domain", C.dom]]) {
      const sel = $(id);
      const m = counts(arr);
      [...m.keys()].filter((k) => k >= 0).sort((a, b) => str(a).localeCompare(str(b))).forEach((k) => {
        const opt = document.createElement("option");
        opt.value = String(k);
        opt.textContent = str(k) + " (" + m.get(k).toLocaleString("en-US") + ")";
        sel.appendChild(opt);
      });
    }
    oOpts.addEventListener("change", (ev) => {
      const i = +ev.target.dataset.i;
      if (ev.target.checked) state.outcomes.add(i); else state.outcomes.delete(i);
      refresh();
    });
    oOpts.querySelector(".all").addEventListener("click", (ev) => {
      const a = ev.target.dataset.all;
      if (a === undefined) return;
      state.outcomes = new Set(OUT.map((_, i) => i).filter((i) => a === "1" || (a === "f" && FAIL.has(i))));
      oOpts.querySelectorAll("input").forEach((el) => { el.checked = state.outcomes.has(+el.dataset.i); });
      refresh();
    });
    bOpts.addEventListener("change", (ev) => {
      const i = +ev.target.dataset.i;
      if (ev.target.checked) state.backends.add(i); else state.backends.delete(i);
      refresh();
    });
    let timer = null;
    $("q").addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        state.terms = $("q").value.toLowerCase().split(/\s+/).filter(Boolean);
        refresh();
      }, 150);
    });
    $("f-suite").addEventListener("change", (ev) => { state.suite = ev.target.value === "" ? -1 : +ev.target.value; refresh(); });
    $("f-domain").addEventListener("change", (ev) => { state.domain = ev.target.value === "" ? -1 : +ev.target.value; refresh(); });
    $("f-only").addEventListener("change", (ev) => { state.only = ev.target.checked; refresh(); });
    $("f-fail").addEventListener("change", (ev) => { state.fail = ev.target.checked; refresh(); });
    $("f-known").addEventListener("change", (ev) => { state.known = ev.target.checked; if (state.known && !state.fail) { state.fail = true; $("f-fail").checked = true; } refresh(); });
    $("rowfilter").addEventListener("click", () => { state.row = null; refresh(); });
    $("groupfilter").addEventListener("click", () => { state.group = -1; refresh(); });
    $("cases-groupby").addEventListener("change", (ev) => { state.groupBy = ev.target.value; state.page.cases = 0; renderCases(); });
    $("reset").addEventListener("click", () => {
      state.terms = []; $("q").value = "";
      state.outcomes = new Set(OUT.map((_, i) => i)); state.backends = new Set(B.map((_, i) => i));
      state.suite = state.domain = -1; state.only = state.fail = state.known = false; state.row = null; state.group = -1;
      document.querySelectorAll("#filters input[type=checkbox]").forEach((el) => { el.checked = !["f-only", "f-fail", "f-known"].includes(el.id); });
      $("f-suite").value = ""; $("f-domain").value = "";
      refresh();
    });
    document.addEventListener("click", (ev) => {  // close the drop-downs on an outside click
      document.querySelectorAll("details.drop[open]").forEach((d) => { if (!d.contains(ev.target)) d.open = false; });
    });
    $("legend").innerHTML = OUT.map((o) => "<span><span class='dot' style='background:var(--o-" + o + ")'></span>" + esc(o) + "</span>").join("");
    $("views").innerHTML = D.views.map((v) => "<button type='button' role='tab' data-view='" + v + "'>op × " + v + "</button>").join("").replace("op × suite", "suite");
    $("views").addEventListener("click", (ev) => {
      const t = ev.target.closest("button[data-view]");
      if (!t) return;
      state.view = t.dataset.view; state.page.matrix = 0;
      renderMatrix();
      writeHash();
    });
  }
  function filterSummary() {
    $("f-outcome").querySelector(".n").textContent = state.outcomes.size === NO ? "(all)" : "(" + state.outcomes.size + ")";
    $("f-backend").querySelector(".n").textContent = state.backends.size === NB ? "(all)" : "(" + state.backends.size + ")";
    const chip = $("rowfilter");
    if (state.row) {
      const v = C.views[state.row.view];
      const label = [str(v.g[state.row.row]), str(v.k[state.row.row])].filter(Boolean).join(" · ") +
        (state.row.backend >= 0 ? " on " + B[state.row.backend].label : "");
      chip.textContent = label + " ×";
      chip.title = "remove this matrix filter";
      chip.classList.remove("hidden");
    } else chip.classList.add("hidden");
    const gchip = $("groupfilter");
    if (state.group >= 0) {
      gchip.textContent = groupLabel(state.group) + " ×";
      gchip.title = "remove this cause filter";
      gchip.classList.remove("hidden");
    } else gchip.classList.add("hidden");
  }
  const groupLabel = (g) => B[G.b[g]].label + ": " + str(G.op[g]) + " " + OUT[G.o[g]] + (str(G.dt[g]) && str(G.dt[g]) !== "-" ? " for " + str(G.dt[g]) : "");

  // -- the matrix ----------------------------------------------------------------------------------
  function renderMatrix() {
    document.querySelectorAll("#views button").forEach((b) => b.classList.toggle("on", b.dataset.view === state.view));
    const v = C.views[state.view], nrows = v.g.length, vis = visibleBackends();
    const counts = new Int32Array(nrows * NB * NO);
    const rowCases = new Int32Array(nrows);
    for (let i = 0; i < NR; i++) {
      if (!resMask[i]) continue;
      counts[(v.row[R.c[i]] * NB + R.b[i]) * NO + R.o[i]]++;
    }
    const rows = [];
    for (let r = 0; r < nrows; r++) {
      let n = 0;
      for (const b of vis) for (let o = 0; o < NO; o++) n += counts[(r * NB + b) * NO + o];
      if (n) rows.push(r);
      rowCases[r] = n;
    }
    const [from, to] = pager("matrix", rows.length, renderMatrix);
    const keyHead = { "op-version": "version", opset: "opset", dtype: "dtype", suite: "" }[state.view];
    let h = "<table class='grid matrix'><thead><tr><th>" + (state.view === "suite" ? "suite" : "op") + "</th>" +
      (keyHead ? "<th>" + keyHead + "</th>" : "") +
      vis.map((b) => "<th>" + esc(B[b].label) + (B[b].available ? "" : " <span class='muted'>(unavailable)</span>") + "</th>").join("") + "</tr></thead><tbody>";
    let prev = null;
    for (let n = from; n < to; n++) {
      const r = rows[n], g = str(v.g[r]);
      h += "<tr><td class='grp" + (g === prev && n !== from ? " cont" : "") + "'>" + esc(g) + "</td>" + (keyHead ? "<td>" + esc(dash(str(v.k[r]))) + "</td>" : "");
      prev = g;
      for (const b of vis) {
        const base = (r * NB + b) * NO;
        let tot = 0, den = 0, pass = 0, segs = "", title = [];
        for (let o = 0; o < NO; o++) {
          const k = counts[base + o];
          if (!k) continue;
          tot += k; if (PASS.has(o)) pass += k; if (!APART.has(o)) den += k;
          segs += "<span style='flex-grow:" + k + ";background:var(--o-" + OUT[o] + ")'></span>";
          title.push(OUT[o] + " " + k);
        }
        if (!tot) { h += "<td class='cell empty'><span class='muted'>–</span></td>"; continue; }
        // with "failures only" every cell would read 0/N: it counts the failures instead
        const text = state.fail ? tot.toLocaleString("en-US") + " failing" : pass.toLocaleString("en-US") + "/" + den.toLocaleString("en-US");
        h += "<td class='cell' data-row='" + r + "' data-b='" + b + "' title='" + esc(B[b].label + ": " + title.join(", ")) + "'><div class='crow'><div class='mbar'>" + segs +
          "</div><span class='ctext" + (state.fail || pass < den ? " bad" : "") + "'>" + text + "</span></div></td>";
      }
      h += "</tr>";
    }
    $("matrix-table").innerHTML = h + "</tbody></table>";
  }
  $("matrix-table").addEventListener("click", (ev) => {
    const td = ev.target.closest("td.cell[data-row]");
    if (!td) return;
    state.row = { view: state.view, row: +td.dataset.row, backend: +td.dataset.b };
    state.page.cases = 0;
    refresh();
    $("cases").scrollIntoView();
  });

  // -- the case list ---------------------------------------------------------------------------------
  function badge(i, dim) {
    const o = OUT[R.o[i]];
    return "<button type='button' class='badge o-" + o + (dim ? " dim" : "") + "' data-r='" + i + "' style='background:var(--o-" + o + ")' title='" +
      esc(B[R.b[i]].label + ": " + o + (str(col(R.m, i, -1)) ? " — " + str(R.m[i]).slice(0, 200) : "")) + "'>" + esc(o) + "</button>" +
      (col(R.only, i, 0) ? "<span class='mark-only' title='fails only on this backend'>◆</span>" : "");
  }
  function messageOf(c, vis) {
    // the message of the first listed non-pass on this case (with its backend when several are shown)
    for (const b of vis) {
      const i = byCase[c * NB + b];
      if (i < 0 || !listMask[i] || PASS.has(R.o[i])) continue;
      const m = str(col(R.m, i, -1));
      if (m) return (vis.length > 1 ? B[b].label + ": " : "") + m;
    }
    return "";
  }
  function renderCauses() {
    // the listed non-passes counted per failure group, in the groups' order (wrong answers first)
    const shown = new Array(NG).fill(0);
    for (let i = 0; i < NR; i++) if (listMask[i] && R.g[i] >= 0) shown[R.g[i]]++;
    const list = [];
    for (let g = 0; g < NG; g++) if (shown[g]) list.push(g);
    const [from, to] = pager("cases", list.length, renderCases);
    let h = "<table class='grid causes'><thead><tr><th>backend</th><th>kind</th><th>op</th><th>outcome</th><th class='num'>cases</th><th>dtypes</th><th>message (numbers and names stripped)</th></tr></thead><tbody>";
    for (let n = from; n < to; n++) {
      const g = list[n], o = OUT[G.o[g]];
      h += "<tr><td>" + esc(B[G.b[g]].label) + "</td><td>" + esc(str(G.k[g])) + "</td><td>" + esc(str(G.op[g])) +
        "</td><td><span class='badge o-" + o + "' style='background:var(--o-" + o + ")'>" + esc(o) + "</span></td><td class='num'><a href='#cases' data-g='" + g + "'>" +
        shown[g].toLocaleString("en-US") + (shown[g] !== G.n[g] ? " of " + G.n[g].toLocaleString("en-US") : "") + "</a></td><td>" + esc(str(G.dt[g])) +
        "</td><td class='msg'>" + esc(str(G.m[g])) + "</td></tr>";
    }
    $("case-table").innerHTML = h + "</tbody></table>";
  }
  document.addEventListener("click", (ev) => {  // a group's count: list its cases
    const t = ev.target.closest("a[data-g]");
    if (!t) return;
    ev.preventDefault();
    state.group = +t.dataset.g;
    state.groupBy = "case";
    $("cases-groupby").value = "case";
    refresh();
    $("cases").scrollIntoView();
  });
  function renderCases() {
    if (state.groupBy === "cause") return renderCauses();
    const vis = visibleBackends(), list = [];
    for (let c = 0; c < NC; c++) {
      if (!caseMask[c]) continue;
      for (let b = 0; b < NB; b++) { const i = byCase[c * NB + b]; if (i >= 0 && listMask[i]) { list.push(c); break; } }
    }
    const [from, to] = pager("cases", list.length, renderCases);
    let h = "<table class='grid'><thead><tr><th>case</th><th>op-version</th><th class='num'>opset</th><th>dtype</th>" +
      vis.map((b) => "<th>" + esc(B[b].label) + "</th>").join("") + "<th>message</th></tr></thead><tbody>";
    for (let n = from; n < to; n++) {
      const c = list[n];
      const sv = C.sv[c];
      h += "<tr><td class='case'>" + esc(C.id[c]) + "</td><td>" + esc(str(C.op[c]) + (sv !== null ? "-" + sv : "")) + "</td><td class='num'>" +
        (C.opset[c] === null ? "–" : C.opset[c]) + "</td><td>" + esc(dash(str(C.dt[c]))) + "</td>";
      for (const b of vis) {
        const i = byCase[c * NB + b];
        h += "<td>" + (i >= 0 ? badge(i, !listMask[i]) : "<span class='muted'>–</span>") + "</td>";
      }
      const m = messageOf(c, vis);
      h += "<td class='msg' title='" + esc(m) + "'>" + esc(m.length > 160 ? m.slice(0, 159) + "…" : m) + "</td></tr>";
    }
    $("case-table").innerHTML = h + "</tbody></table>";
  }
  document.addEventListener("click", (ev) => {
    const t = ev.target.closest("[data-r]");
    if (t && t.id !== "drill") openDrill(+t.dataset.r);  // #drill keeps the open result in data-r: a click inside it is no link
  });

  // -- drill-down --------------------------------------------------------------------------------------
  function dl(pairs) {
    return "<dl>" + pairs.filter((p) => p[1] !== null && p[1] !== undefined && p[1] !== "").map((p) =>
      "<dt>" + esc(p[0]) + "</dt><dd data-field='" + esc(p[2] || p[0]) + "'>" + p[1] + "</dd>").join("") + "</dl>";
  }
  function bundleOf(i) {
    const dir = str(col(R.bd, i, -1));
    if (!dir) return "";
    const name = str(col(R.bn, i, -1)) || C.id[R.c[i]].replace(/[^A-Za-z0-9._-]+/g, "__");
    return dir + "/" + name;
  }
  function findingLink(i) {
    const f = col(R.fd, i, -1) >= 0 ? JSON.parse(str(R.fd[i])) : null;
    if (!f) return "";
    const title = esc(f.id) + ": " + esc(f.title);
    return (f.upstream.startsWith("https://") ? "<a href='" + esc(f.upstream) + "' rel='noreferrer'>" + title + "</a>" : title + " (" + esc(f.upstream) + ")") +
      " · <code>onnx-harness findings show " + esc(f.id) + "</code>";
  }
  function openDrill(i) {
    if (!(i >= 0 && i < NR)) return;
    const c = R.c[i], b = R.b[i], o = OUT[R.o[i]], raw = col(R.ro, i, -1);
    const x = col(C.x, c, -1) >= 0 ? JSON.parse(str(C.x[c])) : {};
    const tagText = (v) => esc(Array.isArray(v) ? v.join(", ") : typeof v === "object" ? JSON.stringify(v) : String(v));
    let h = "<h2 id='drill-title'>" + esc(C.id[c]) + "</h2>" +
      "<p>on <b>" + esc(B[b].label) + "</b> " + esc(B[b].version) + " · " + badge(i, false) + " · " + esc(D.runs[col(R.run, i, 0)] || "") + "</p>";
    h += "<h3>Model</h3>" + dl([
      ["suite", esc(str(C.suite[c]))],
      ["op-version", C.sv[c] !== null ? esc(str(C.op[c]) + "-" + C.sv[c]) : (str(C.op[c]) === "(graphs)" ? "" : esc(str(C.op[c])))],
      ["domain", esc(str(C.dom[c]))],
      ["opset", C.opset[c] === null ? "" : String(C.opset[c])],
      ["dtype", esc(str(C.dt[c]))],
    ].concat(Object.keys(x).map((k) => [k, tagText(x[k]), "tag-" + k])));
    const reason = str(col(R.rs, i, -1));
    h += "<h3>Outcome</h3>" + dl([
      ["outcome", esc(o), "outcome"],
      ["before expectations", raw >= 0 ? esc(OUT[raw]) : "", "raw_outcome"],
      ["expected", o === "xfail" ? "this failure (" + esc(raw >= 0 ? OUT[raw] : o) + ")" : o === "xpass" ? "a failure, but it passed" : o === "unspecified" ? "not a failure: differs only where the spec is silent, every invariant kept" : reason ? "another failure" : o === "pass" ? "pass" : "pass (no known-failure entry)", "expected"],
      ["expectation reason", esc(reason), "reason"],
      ["finding", findingLink(i), "finding"],
    ]);
    const nan = col(R.nan, i, null), out = col(R.out, i, null);
    const verdict = [
      ["max abs error", R.ma[i] === null ? "" : fmtNum(R.ma[i]), "max_abs"],
      ["max rel error", R.mr[i] === null ? "" : fmtNum(R.mr[i]), "max_rel"],
      ["max ULP distance", R.mu[i] === null ? "" : fmtNum(R.mu[i]), "max_ulp"],
      ["bad elements", R.bc[i] === null ? "" : fmtNum(R.bc[i]) + (col(R.tot, i, null) !== null ? " of " + fmtNum(R.tot[i]) : ""), "bad_count"],
      ["first bad index", esc(str(col(R.fb, i, -1))), "first_bad"],
      ["output", out === null || out === undefined ? "" : String(out), "output"],
      ["NaN/Inf misplaced", nan ? fmtNum(nan) : "", "nan_mismatch"],
    ];
    h += "<h3>Verdict</h3>" + (verdict.some((p) => p[1] !== "") ? dl(verdict) : "<p class='muted'>no comparison (the case did not produce outputs)</p>");
    const msg = str(col(R.m, i, -1));
    if (msg) h += "<h3>Message</h3><pre data-field='message'>" + esc(msg) + "</pre>";
    h += evidence(i);
    const lz = col(R.lz, i, -1) >= 0 ? JSON.parse(str(R.lz[i])) : null;
    if (lz) {
      const vals = (v) => v ? esc(v.type) + " <code>" + esc(JSON.stringify(v.values)) + "</code>" : "";
      h += "<h3>Where it went wrong</h3>" + (lz.node ? dl([
        ["first diverging node", esc(lz.node), "localized_node"],
        ["input shapes", esc((lz.input_shapes || []).join(", ")), "localized_shapes"],
        ["found by", esc(lz.method) + " (oracle: " + esc(lz.oracle) + ")", "localized_method"],
        ["why", esc(lz.message), "localized_message"],
      ].concat(Object.keys(lz.inputs || {}).map((k) => ["input " + k, vals(lz.inputs[k])]))
       .concat((lz.expected || []).map((v, k) => ["oracle output " + k, vals(v)]))
       .concat((lz.actual || []).map((v, k) => ["backend output " + k, vals(v)]))
       .concat([
        ["the node alone", esc(lz.single_outcome) + (lz.confirmed ? ": wrong on its own" : ": right alone (a fusion, or accumulated error)"), "localized_single"],
        ["one-node bundle", lz.bundle ? "<code>" + esc(lz.bundle) + "</code>" : "", "localized_bundle"],
      ])) : "<p class='muted' data-field='localized_message'>" + esc(lz.status === "failed" ? "localize failed: " + lz.message :
        "no node diverges beyond its tolerance (the failure is rounding against the stored outputs)") + "</p>");
    }
    const p90 = col(R.p9, i, null), med = col(R.md, i, null), rst = str(col(R.rst, i, -1));
    h += "<h3>Timing</h3>" + dl([
      ["prepare", fmtSecs(R.pr[i]), "prepare_s"], ["run", fmtSecs(R.rt[i]), "run_s"],
      ["median (repeats)", med === null || med === undefined ? "" : fmtSecs(med), "run_median_s"],
      ["p90 (repeats)", p90 === null || p90 === undefined ? "" : fmtSecs(p90), "run_p90_s"],
      ["re-stamped", rst ? "<code>" + esc(rst) + "</code>" : "", "restamp"],
    ]);
    h += reproduce(i);
    const others = [];
    for (let k = 0; k < NB; k++) { const j = byCase[c * NB + k]; if (j >= 0 && j !== i) others.push("<span>" + esc(B[k].label) + " " + badge(j, false) + "</span>"); }
    if (others.length) h += "<h3>Other backends</h3><div class='others'>" + others.join("") + "</div>";
    $("drill-body").innerHTML = h;
    $("drill").classList.remove("hidden");
    $("drill").dataset.r = String(i);
    const p = filterParams();
    p.set("case", C.id[c]); p.set("backend", B[b].label);
    const want = "#" + p.toString();
    if (location.hash !== want) location.hash = want;
    $("drill-close").focus();
  }

  // -- drill-down: evidence, tolerance, why the expected value, commands -------------------------------
  // the evidence travels as one JSON text per result (html.py: _evidence), parsed only when opened
  const evidenceOf = (i) => { const k = col(R.ev, i, -1); return k >= 0 ? JSON.parse(S[k]) : {}; };
  const shapeText = (t) => t.kind === "other" ? esc(t.text) : esc(t.dtype) + "[" + t.shape.join(",") + "]";
  function unravel(flat, shape) {  // a flat index as the comparator's [i,j,...]
    const idx = [];
    for (let d = shape.length - 1; d >= 0; d--) { idx.unshift(flat % shape[d]); flat = Math.floor(flat / shape[d]); }
    return "[" + idx.join(",") + "]";
  }
  function values(t) {
    if (t.kind === "other" || !t.values.length) return "";
    return "<code>" + esc(t.values.join(", ")) + (t.size > t.values.length ? ", …" : "") + "</code>" +
      (t.size > t.values.length ? " <span class='muted'>(first " + t.values.length + " of " + fmtNum(t.size) + ")</span>" : "");
  }
  function evidence(i) {
    const ev = evidenceOf(i), e = ev.evidence, w = ev.window, t = ev.tolerance;
    let h = "";
    if (e && e.inputs) {
      h += "<h3>Inputs</h3><table class='grid ev' data-field='inputs'><thead><tr><th>input</th><th>type</th><th>values</th></tr></thead><tbody>" +
        Object.keys(e.inputs).map((k) => "<tr><td><code>" + esc(k) + "</code></td><td>" + shapeText(e.inputs[k]) + "</td><td>" +
          (values(e.inputs[k]) || "<span class='muted'>in the repro bundle</span>") + "</td></tr>").join("") + "</tbody></table>" +
        (e.more_inputs ? "<p class='muted'>" + e.more_inputs + " more inputs in the repro bundle</p>" : "");
    }
    if (e && (e.expected || e.actual)) {
      const n = Math.max((e.expected || []).length, (e.actual || []).length);
      let rows = "";
      for (let k = 0; k < n; k++) {
        const x = (e.expected || [])[k], y = (e.actual || [])[k];
        const differ = x && y && shapeText(x) !== shapeText(y);
        rows += "<tr" + (differ ? " class='bad'" : "") + "><td>output " + k + "</td><td>" + (x ? shapeText(x) : "–") + "</td><td>" + (y ? shapeText(y) : "<span class='muted'>none (it failed)</span>") + "</td></tr>";
      }
      h += "<h3>Expected vs actual</h3><table class='grid ev' data-field='outputs'><thead><tr><th></th><th>expected</th><th>actual</th></tr></thead><tbody>" + rows + "</tbody></table>";
    }
    if (w) {
      const bad = new Set(w.bad);
      let rows = "";
      for (let k = 0; k < w.expected.length; k++) {
        rows += "<tr" + (bad.has(k) ? " class='bad'" : "") + "><td><code>" + unravel(w.start + k, w.shape) + "</code></td><td><code>" + esc(w.expected[k]) +
          "</code></td><td><code>" + esc(w.actual[k]) + "</code></td></tr>";
      }
      const out = col(R.out, i, null);
      h += "<p class='hint'>output " + (out === null || out === undefined ? 0 : out) + (w.element !== undefined ? ", sequence element " + w.element : "") +
        ": " + w.expected.length + " elements around the first bad one; <b>bad ones highlighted</b> (" + w.bad.length + " here, " +
        (R.bc[i] === null ? "?" : fmtNum(R.bc[i])) + " in all)</p><table class='grid ev window' data-field='window'><thead><tr><th>index</th><th>expected</th><th>actual</th></tr></thead><tbody>" +
        rows + "</tbody></table>";
    }
    if (t) {
      const src = t.source === "override" ? "override for " + Object.keys(t.match).map((k) => k + " " + t.match[k]).join(", ") + " in " + t.file + ": " + t.reason :
        t.source === "dtype default" ? "the " + t.dtype + " default in " + t.file : "case-specific: " + t.reason;
      h += "<h3>Tolerance</h3>" + dl([
        ["bound", t.exact ? "exact: " + esc(t.exact) + " values are compared for equality (the case's rtol " + fmtNum(t.rtol) + ", atol " + fmtNum(t.atol) + " apply to floating outputs only)" :
          "rtol " + fmtNum(t.rtol) + ", atol " + fmtNum(t.atol) + ", ULP " + (t.ulp === null || t.ulp === undefined ? "none" : fmtNum(t.ulp)), "tolerance"],
        ["source", esc(src), "tolerance_source"],
      ]);
    }
    const ss = ev.spec_silent, note = col(R.cx, i, -1) >= 0 ? D.notes[R.cx[i]] : null;
    if (ss || note) {
      h += "<h3>Why this expected value</h3>";
      if (ss) h += dl([
        ["spec-silent point", "<code>" + esc(ss.point || "") + "</code> (" + esc(ss.op_version || "") + ")", "spec_point"],
        ["the spec says", "<q>" + esc(ss.spec || "") + "</q>", "spec_text"],
        ["we expect", esc(ss.choice || ""), "spec_reason"],
        ["invariants", esc((ss.invariants || []).join("; ")), "spec_invariants"],
        ["broken invariant", esc(ss.broken_invariant || ""), "spec_broken"],
      ]);
      if (note) h += dl([
        ["crosscheck note", esc(note.op_version) + " (the spec supports " + esc(note.side === "ours" ? "our expected value" : note.side) + ")", "note"],
        ["the spec says", "<q>" + esc(note.spec) + "</q>", "note_spec"],
        ["why", esc(note.explanation), "note_reason"],
      ]);
    }
    return h;
  }
  // shell quoting as Python's shlex.quote, regex escaping as re.escape (harness/report/reproduce.py)
  const quote = (s) => (s === "" ? "''" : /^[\w@%+=:,./-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\"'\"'") + "'");
  const reEscape = (s) => s.replace(/[()[\]{}?*+\-|^$\\.&~# \t\n\r\v\f]/g, "\\$&");
  function commands(i) {
    const run = D.cmd[col(R.run, i, 0)] || { p: {}, o: {}, nr: false }, id = C.id[R.c[i]], b = B[R.b[i]].name, suite = str(C.suite[R.c[i]]);
    const opts = run.o[b] || [];
    const repro = ["onnx-harness", "repro", id, "--backend", b].concat(opts, ["-o", "repro"], run.nr ? ["--no-restamp"] : []);
    const again = ["onnx-harness", "run"].concat(run.p[suite] || ["--suite", suite], ["--backend", b], opts, ["-k", "^" + reEscape(id) + "$"]);
    return { repro: repro.map(quote).join(" "), run: again.map(quote).join(" ") };
  }
  function reproduce(i) {
    const cmd = commands(i), bundle = bundleOf(i);
    const line = (text, field) => "<div class='cmdline'><pre class='cmd' data-field='" + field + "'>" + esc(text) + "</pre><button type='button' class='copy' data-copy='" + field + "'>copy</button></div>";
    return "<h3>Reproduce</h3><p class='hint'>from a clone of the repository (official suites: <code>onnx-harness corpus build</code> first)</p>" +
      line(cmd.repro, "repro_command") + line(cmd.run, "run_command") +
      (bundle ? dl([["repro bundle", "<code>" + esc(bundle) + "</code>", "bundle"]]) + line("python " + bundle + "/repro.py", "command") : "");
  }
  document.addEventListener("click", (ev) => {
    const t = ev.target.closest("button.copy");
    if (!t) return;
    const source = t.dataset.copyId ? $(t.dataset.copyId) : $("drill-body").querySelector("[data-field='" + t.dataset.copy + "']");
    const text = source.textContent;
    const done = () => { t.textContent = "copied"; setTimeout(() => { t.textContent = "copy"; }, 1200); };
    const fallback = () => {  // file:// pages may have no clipboard API: select the text and copy it
      const r = document.createRange(); r.selectNodeContents(source);
      const sel = getSelection(); sel.removeAllRanges(); sel.addRange(r);
      try { document.execCommand("copy"); done(); } catch (e) { t.textContent = "select and copy"; }
    };
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(text).then(done, fallback); else fallback();
  });
  function closeDrill() {
    if ($("drill").classList.contains("hidden")) return;
    $("drill").classList.add("hidden");
    if (new URLSearchParams(location.hash.slice(1)).has("case")) writeHash();
  }
  $("drill-close").addEventListener("click", closeDrill);
  $("drill").addEventListener("click", (ev) => { if (ev.target === $("drill")) closeDrill(); });
  document.addEventListener("keydown", (ev) => { if (ev.key === "Escape") closeDrill(); });
  // -- the view in the URL: filters (and the open result) as #q=...&o=...&b=...&case=...&backend=... ----
  function filterParams() {
    const p = new URLSearchParams();
    if (state.terms.length) p.set("q", state.terms.join(" "));
    if (state.outcomes.size !== NO) p.set("o", [...state.outcomes].sort((x, y) => x - y).map((i) => OUT[i]).join(","));
    if (state.backends.size !== NB) [...state.backends].sort((x, y) => x - y).forEach((i) => p.append("b", B[i].label));
    if (state.suite >= 0) p.set("suite", str(state.suite));
    if (state.domain >= 0) p.set("domain", str(state.domain));
    for (const k of ["only", "fail", "known"]) if (state[k]) p.set(k, "1");
    if (state.view !== D.views[0]) p.set("view", state.view);
    return p;
  }
  function writeHash() {
    const h = filterParams().toString(), url = location.href.split("#")[0] + (h ? "#" + h : "");
    if (location.href === url) return;
    try { history.replaceState(null, "", url); } catch (e) { location.hash = h; }  // file:// may refuse
  }
  function filtersFromHash(p) {
    state.terms = (p.get("q") || "").toLowerCase().split(/\s+/).filter(Boolean);
    $("q").value = state.terms.join(" ");
    const outs = p.has("o") ? p.get("o").split(",").map((o) => OUT.indexOf(o)).filter((i) => i >= 0) : OUT.map((_, i) => i);
    state.outcomes = new Set(outs);
    const labels = p.getAll("b");
    state.backends = new Set(B.map((_, i) => i).filter((i) => !labels.length || labels.includes(B[i].label)));
    document.querySelectorAll("#f-outcome input").forEach((el) => { el.checked = state.outcomes.has(+el.dataset.i); });
    document.querySelectorAll("#f-backend input").forEach((el) => { el.checked = state.backends.has(+el.dataset.i); });
    for (const [k, id] of [["suite", "f-suite"], ["domain", "f-domain"]]) {
      const v = p.has(k) ? S.indexOf(p.get(k)) : -1;
      state[k] = v; $(id).value = v >= 0 ? String(v) : "";
    }
    for (const k of ["only", "fail", "known"]) { state[k] = p.get(k) === "1"; $("f-" + k).checked = state[k]; }
    if (p.has("view") && D.views.includes(p.get("view"))) state.view = p.get("view");
  }
  function fromHash() {
    const p = new URLSearchParams(location.hash.slice(1));
    const filters = filterParams().toString();
    p.delete("case"); p.delete("backend");
    if (p.toString() !== filters) { filtersFromHash(p); refresh(); }
    const q = new URLSearchParams(location.hash.slice(1));
    if (!q.has("case")) { if (!$("drill").classList.contains("hidden")) closeDrill(); return; }
    const c = caseIndex.get(q.get("case")), label = q.get("backend");
    const b = B.findIndex((x) => x.label === label);
    if (c === undefined || b < 0) return;
    const i = byCase[c * NB + b];
    if (i >= 0 && $("drill").dataset.r !== String(i) || $("drill").classList.contains("hidden")) openDrill(i);
  }
  window.addEventListener("hashchange", fromHash);

  // -- performance table ------------------------------------------------------------------------------
  function buildPerfSort() {
    const sel = $("perf-sort");
    B.forEach((b, k) => {
      if (!b.available) return;
      sel.insertAdjacentHTML("beforeend", "<option value='f" + k + "'>" + esc(b.label) + ": × fastest (slowest first)</option>" +
        "<option value='l" + k + "'>" + esc(b.label) + ": latency (slowest first)</option>");
    });
    sel.addEventListener("change", () => { state.perfSort = sel.value; state.page.perf = 0; renderPerf(); });
  }
  const perfRes = (k, b) => ((P.m[k] >> b) & 1 ? byCase[P.c[k] * NB + b] : -1);
  function renderPerf() {
    const n = P.c.length, vis = visibleBackends().filter((b) => B[b].available), ort = D.ort;
    let rows = [];
    for (let k = 0; k < n; k++) {
      const c = P.c[k];
      if (!caseMask[c]) continue;
      let any = false;
      for (let b = 0; b < NB; b++) { const i = perfRes(k, b); if (i >= 0 && resMask[i]) { any = true; break; } }
      if (any) rows.push(k);
    }
    const lat = (k, b) => { const i = perfRes(k, b); return i >= 0 ? latency(i) : null; };
    const s = state.perfSort;
    if (s !== "case") {
      const b = +s.slice(1), byRatio = s[0] === "f";
      const key = (k) => { const v = lat(k, b); if (v === null) return -1; return byRatio ? v / lat(k, P.f[k]) : v; };
      rows = rows.map((k) => [key(k), k]).sort((a, z) => z[0] - a[0]).map((p) => p[1]);
    }
    const [from, to] = pager("perf", rows.length, renderPerf);
    let h = "<table class='grid'><thead><tr><th>case</th>" + vis.map((b) => "<th class='num'>" + esc(B[b].label) + "</th><th class='num'>× fastest</th>" +
      (ort >= 0 && b !== ort ? "<th class='num'>× " + esc(B[ort].label) + "</th>" : "")).join("") + "</tr></thead><tbody>";
    for (let n2 = from; n2 < to; n2++) {
      const k = rows[n2], best = lat(k, P.f[k]), base = ort >= 0 ? lat(k, ort) : null;
      const alone = (P.m[k] & (P.m[k] - 1)) === 0;  // one backend timed it: "fastest" would say nothing (as "fastest on" counts)
      h += "<tr><td class='case'>" + esc(C.id[P.c[k]]) + "</td>";
      for (const b of vis) {
        const i = perfRes(k, b);
        if (i < 0) { h += "<td class='num muted'>–</td><td></td>" + (ort >= 0 && b !== ort ? "<td></td>" : ""); continue; }
        const v = latency(i), p90 = col(R.p9, i, null), rf = best ? v / best : null;
        h += "<td class='num' data-r='" + i + "' title='" + (col(R.md, i, null) !== null ? "median of repeats" : "run time") + "'>" + fmtSecs(v) +
          (p90 !== null && p90 !== undefined ? " <span class='muted'>p90 " + fmtSecs(p90) + "</span>" : "") + "</td>" +
          (alone ? "<td class='num muted' title='no other backend timed this case'>only</td>" :
            "<td class='num " + (P.f[k] === b ? "ratio-best" : rf > 2 ? "ratio-hi" : "") + "'>" + (P.f[k] === b ? "fastest" : fmtRatio(rf)) + "</td>") +
          (ort >= 0 && b !== ort ? "<td class='num'>" + (base ? fmtRatio(v / base) : "–") + "</td>" : "");
      }
      h += "</tr>";
    }
    $("perf-table").innerHTML = h + "</tbody></table>";
  }

  // -- diff -------------------------------------------------------------------------------------------------
  function buildDiff() {
    if (!D.diff) return;
    const el = $("diff-kinds");
    const allowed = new Map();  // per kind, the changes an expectation allows
    for (const [n] of D.diff.allowed || []) allowed.set(D.diff.k[n], (allowed.get(D.diff.k[n]) || 0) + 1);
    el.innerHTML = D.kinds.map((k, n) => "<button type='button' class='on' data-k='" + n + "'><span class='k-" + k + "'>" + k + "</span> " +
      (D.diff.counts[k] || 0).toLocaleString("en-US") + (allowed.get(n) ? " (" + allowed.get(n).toLocaleString("en-US") + " allowed)" : "") + "</button>").join("");
    el.addEventListener("click", (ev) => {
      const t = ev.target.closest("button[data-k]");
      if (!t) return;
      const k = +t.dataset.k;
      if (state.kinds.has(k)) state.kinds.delete(k); else state.kinds.add(k);
      t.classList.toggle("on", state.kinds.has(k));
      state.page.diff = 0;
      renderDiff();
    });
  }
  function renderDiff() {
    if (!D.diff) return;
    const X = D.diff, rows = [], allowed = new Map((X.allowed || []).map(([n, why]) => [n, str(why)]));
    for (let n = 0; n < X.k.length; n++) {
      if (!state.kinds.has(X.k[n])) continue;
      const id = str(X.c[n]).toLowerCase();
      if (state.terms.some((t) => id.indexOf(t) < 0)) continue;
      rows.push(n);
    }
    const [from, to] = pager("diff", rows.length, renderDiff);
    const oc = (o) => (o < 0 ? "<span class='muted'>–</span>" : "<span class='badge o-" + OUT[o] + "' style='background:var(--o-" + OUT[o] + ")'>" + OUT[o] + "</span>");
    let h = "<table class='grid'><thead><tr><th>change</th><th>case</th><th>backend</th><th>" + esc(X.base) + "</th><th>" + esc(X.new) + "</th></tr></thead><tbody>";
    for (let n = from; n < to; n++) {
      const d = rows[n], id = str(X.c[d]), c = caseIndex.get(id), name = str(X.b[d]);
      const b = B.findIndex((x) => x.name === name);
      const i = c !== undefined && b >= 0 ? byCase[c * NB + b] : -1;
      const why = allowed.get(d);
      h += "<tr><td class='k-" + D.kinds[X.k[d]] + "'" + (why !== undefined ? " title='" + esc(why) + "'" : "") + ">" + D.kinds[X.k[d]] +
        (why !== undefined ? " <span class='muted'>(allowed: " + esc(why) + ")</span>" : "") + "</td><td class='case'>" + (i >= 0 ? "<a href='#' data-r='" + i + "'>" + esc(id) + "</a>" : esc(id)) +
        "</td><td>" + esc(name) + "</td><td>" + oc(X.o0[d]) + "</td><td>" + oc(X.o1[d]) + "</td></tr>";
    }
    $("diff-table").innerHTML = h + "</tbody></table>";
  }
  $("diff-table") && $("diff-table").addEventListener("click", (ev) => { if (ev.target.closest("a[data-r]")) ev.preventDefault(); });

  // -- wiring ---------------------------------------------------------------------------------------------
  function refresh() {
    if (document.body.dataset.ready) writeHash();  // the URL says what is shown (not while the page opens)
    state.page.matrix = state.page.cases = state.page.perf = state.page.diff = 0;
    compute();
    filterSummary();
    renderMatrix();
    renderCases();
    renderPerf();
    renderDiff();
  }
  // the sticky filter bar must not cover a section's head (its view tabs) after a jump or a scroll
  const filterHeight = () => document.documentElement.style.setProperty("--filters-h", $("filters").offsetHeight + "px");
  window.addEventListener("resize", filterHeight);
  // the bar grows when its contents wrap (a chip, the count of shown results): follow its height
  if (window.ResizeObserver) new ResizeObserver(filterHeight).observe($("filters"));
  buildFilters();
  filterHeight();
  buildPerfSort();
  buildDiff();
  refresh();
  fromHash();
  // a handle for scripted use (screenshots, tests)
  window.harnessReport = { openDrill, closeDrill, state, data: { R, C, B, S, OUT, G, diff: D.diff, kinds: D.kinds, failures: D.failures }, find: (id, label) => { const c = caseIndex.get(id), b = B.findIndex((x) => x.label === label); return c === undefined || b < 0 ? -1 : byCase[c * NB + b]; } };
  document.body.dataset.ready = "1";
})();
