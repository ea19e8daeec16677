// uopc viz: the page's script.  It reads the JSON in #uopc-data (written by
// tools/cmd_viz.c) and draws, as SVG, only what is on screen: the input and
// final pictures once, the picture of the current step each time the step
// changes.  Layouts come from Graphviz (dot -Tplain), precomputed.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("uopc-data").textContent);
  const $ = (id) => document.getElementById(id);
  const SVGNS = "http://www.w3.org/2000/svg";
  const CLS = { b: "before hl", a: "after hl", m: "match hl", s: "stub", c: "chain", k: "konst" };
  const nsteps = D.steps.length;
  let cur = 0; // 1-based step on screen, 0: none

  // ---- pictures -----------------------------------------------------------

  function el(name, attrs, parent) {
    const e = document.createElementNS(SVGNS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  // A picture: boxes [x, y, w, h, id, cls, label?] centred at (x, y);
  // edges [from, to, rw, x0, y0, x1, y1, ...] as cubic Bezier points.
  function draw(host, pic) {
    const P = D.pics[pic], pad = 6;
    const svg = el("svg", { width: P.w + 2 * pad, height: P.h + 2 * pad, viewBox: `0 0 ${P.w + 2 * pad} ${P.h + 2 * pad}` });
    const defs = el("defs", {}, svg);
    const mk = el("marker", { id: "ah" + pic, viewBox: "0 0 8 8", refX: 1, refY: 4, markerWidth: 6, markerHeight: 6, orient: "auto" }, defs);
    el("path", { d: "M0,0 L8,4 L0,8 z", class: "arrowhead" }, mk);
    const g = el("g", { transform: `translate(${pad},${pad})` }, svg);
    for (const e of P.e) {
      const p = e.slice(3);
      let d = `M${p[0]},${p[1]} C`;
      for (let i = 2; i < p.length; i += 2) d += `${p[i]},${p[i + 1]} `;
      el("path", { d: d, class: e[2] ? "edge rw" : "edge", "marker-end": `url(#ah${pic})` }, g);
    }
    P.n.forEach((n, i) => {
      const [x, y, w, h, id, cls] = n;
      const box = el("g", { class: "node " + (CLS[cls] || ""), "data-item": i }, g);
      if (id >= 0) box.setAttribute("data-id", id);
      el("rect", { x: x - w / 2, y: y - h / 2, width: w, height: h, rx: 4 }, box);
      const lines = (n.length > 6 ? n[6] : D.labels[id] || "?").split("\n");
      const t = el("text", { x: x, y: y - ((lines.length - 1) * 12) / 2 + 3.5, "text-anchor": "middle" }, box);
      lines.forEach((l, k) => {
        const s = el("tspan", { x: x, dy: k ? 12 : 0 }, t);
        s.textContent = l;
      });
      const tip = el("title", {}, box);
      tip.textContent = (id >= 0 ? `n${id}${D.names[id] ? " " + D.names[id] : ""}: ` : "") + lines.join(" ");
    });
    host.replaceChildren(svg);
    return svg;
  }

  function ruleOf(s) { return D.rules[s[0]]; }
  function where(r) { return r[1] ? `${r[1]}:${r[2]}` : ""; }

  // ---- steps --------------------------------------------------------------

  function show(i) {
    if (!nsteps) return;
    i = Math.max(1, Math.min(nsteps, i));
    const s = D.steps[i - 1], r = ruleOf(s);
    cur = i;
    $("slider").value = i;
    $("stepno").textContent = `step ${i} / ${nsteps}`;
    $("rule").textContent = r[0];
    $("loc").textContent = where(r) + (r[3] ? ` (${r[3]})` : "");
    $("loc").title = r[4];
    const w = s[3] >= 0 ? D.rewrites[s[3]] : null;
    $("rwinfo").textContent = w ? `in graph_rewrite #${s[3] + 1} (${w[0] || "rules"}${s[4] ? ", nested " + s[4] : ""})` : "";
    $("sbefore").textContent = s[7];
    $("safter").textContent = s[8];
    draw($("step-view"), s[5]);
    const list = $("step-list"), old = list.querySelector("li.on");
    if (old) old.classList.remove("on");
    const li = list.children[i - 1];
    li.classList.add("on");
    const top = li.offsetTop - list.offsetTop;
    if (top < list.scrollTop || top > list.scrollTop + list.clientHeight - 20) list.scrollTop = top - list.clientHeight / 2;
  }

  function buildList() {
    const list = $("step-list"), frag = document.createDocumentFragment();
    D.steps.forEach((s, k) => {
      const r = ruleOf(s), li = document.createElement("li");
      li.style.paddingLeft = 4 + 12 * s[4] + "px";
      li.innerHTML = `<span class="n">${k + 1}</span> `;
      li.appendChild(document.createTextNode(r[0] + " "));
      const f = document.createElement("span");
      f.className = "f";
      f.textContent = where(r).replace(/^.*\//, "");
      li.appendChild(f);
      li.title = `${r[0]} ${where(r)}: ${s[7]} -> ${s[8]}`;
      li.dataset.step = k + 1;
      frag.appendChild(li);
    });
    list.appendChild(frag);
    list.addEventListener("click", (e) => {
      const li = e.target.closest("li");
      if (li) show(+li.dataset.step);
    });
  }

  // ---- search -------------------------------------------------------------

  let touches = null; // node id -> steps that matched or made it
  function stepsOf(id) {
    if (!touches) {
      touches = new Map();
      const add = (n, k) => { if (!touches.has(n)) touches.set(n, []); const a = touches.get(n); if (a[a.length - 1] !== k) a.push(k); };
      D.steps.forEach((s, k) => { for (const n of s[6]) add(n, k + 1); add(s[2], k + 1); });
    }
    return touches.get(id) || [];
  }

  function mark(view, ref, id) {
    for (const e of $(view).querySelectorAll(".found")) e.classList.remove("found");
    if (!ref) return false;
    const at = ref.at[ref.ids.indexOf(id)];
    if (at === undefined || at < 0) return false;
    const box = $(view).querySelector(`g[data-item="${at}"]`);
    if (!box) return false;
    box.classList.add("found");
    box.scrollIntoView({ block: "center", inline: "center" });
    return true;
  }

  function find(q) {
    const box = $("results");
    box.replaceChildren();
    q = q.trim().toLowerCase();
    if (!q) {
      for (const e of document.querySelectorAll(".found")) e.classList.remove("found");
      return (box.hidden = true);
    }
    const out = [];
    D.rules.forEach((r, k) => {
      if (!r[0].toLowerCase().includes(q) && !r[4].toLowerCase().includes(q)) return;
      const at = [];
      D.steps.forEach((s, j) => { if (s[0] === k) at.push(j + 1); });
      out.push([`rule ${r[0]} (${where(r)}): fired ${at.length} times, steps ${at.slice(0, 12).join(", ")}${at.length > 12 ? ", ..." : ""}`, () => show(at[0])]);
    });
    for (const id in D.labels) {
      if (out.length > 60) break;
      const name = D.names[id] || "", lab = D.labels[id].replace(/\n/g, " ");
      if (!(lab.toLowerCase().includes(q) || name.toLowerCase() === q || name.toLowerCase().includes(q) || "n" + id === q)) continue;
      const n = +id, st = stepsOf(n);
      const inIn = D.input.ids.includes(n), inFin = D.final && D.final.ids.includes(n);
      const places = [inIn ? "input" : "", inFin ? "final" : "", st.length ? `steps ${st.slice(0, 8).join(", ")}${st.length > 8 ? ", ..." : ""}` : ""].filter(Boolean);
      out.push([`n${id} ${name} ${lab}: ${places.join("; ") || "not drawn"}`, () => {
        const a = mark("input-view", D.input, n), b = mark("final-view", D.final, n);
        if (st.length && !a && !b) show(st[0]);
      }]);
    }
    if (!out.length) out.push([`nothing named '${q}'`, null]);
    for (const [text, go] of out.slice(0, 60)) {
      const d = document.createElement("div");
      d.textContent = text;
      if (go) d.addEventListener("click", () => { box.hidden = true; go(); });
      else d.className = "none";
      box.appendChild(d);
    }
    box.hidden = false;
  }

  // ---- the page -----------------------------------------------------------

  function note(ref) {
    const drawn = D.pics[ref.pic].n.filter((n) => n[5] !== "s").length;
    const cut = ref.at.filter((a) => a < 0).length;
    return `${ref.ids.length} nodes, ${drawn} boxes${cut ? `, ${cut} nodes beyond the ${drawn} boxes nearest the root` : ""}`;
  }

  function init() {
    const verbs = { run: "run", simplify: "simplify", compile: "compile" };
    $("summary").textContent = `${verbs[D.verb]}: ${nsteps} steps in ${D.rewrites.length} graph_rewrite calls` +
      (D.value !== null ? ` · value ${D.value.length > 60 ? D.value.slice(0, 57) + "..." : D.value}` : "");
    if (D.value !== null) $("summary").title = D.value;
    if (D.error) { $("error").textContent = D.error; $("error").hidden = false; }
    $("footer").textContent = `uopc ${D.version} · ${D.pics.length} pictures laid out by Graphviz dot`;
    draw($("input-view"), D.input.pic);
    $("input-note").textContent = note(D.input);
    if (D.final) {
      draw($("final-view"), D.final.pic);
      $("final-note").textContent = note(D.final) + (D.final.pic === D.input.pic ? " (the input: nothing changed)" :
        D.kernel && D.kernel.kernels.length > 1 ? " (the last kernel, which computes the result; all of them are under Kernels)" : "");
    } else {
      $("final-view").textContent = "no final graph: the verb failed (see above)";
    }
    if (D.kernel) {
      $("kernel-section").hidden = false;
      $("plan-section").hidden = false;
      $("plan").textContent = D.kernel.schedule;
      $("kernel-head").textContent = D.kernel.kernels.length === 1 ? "Kernel" : `Kernels (${D.kernel.kernels.length})`;
      const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; };
      D.kernel.kernels.forEach((k, i) => {
        const box = el("div", undefined, "kernel");
        box.id = "kernel-" + i;
        if (D.kernel.kernels.length > 1) box.appendChild(el("h3", k.title));
        if (k.graph) {
          const g = el("div", undefined, "graph");
          g.addEventListener("dblclick", () => g.classList.toggle("fit"));
          box.appendChild(g);
          draw(g, k.graph.pic);
        }
        box.appendChild(el("h4", "Loop nest"));
        const nest = el("pre", k.nest); nest.id = i ? "nest-" + i : "nest"; box.appendChild(nest);
        for (const [key, what] of [["llvm", "LLVM IR (as emitted, before optimization)"], ["asm", "Assembly (optimized, host CPU)"]]) {
          const d = el("details"); d.id = (i ? key + "-pane-" + i : key + "-pane");
          d.appendChild(el("summary", what));
          const pre = el("pre", k[key]); pre.id = i ? key + "-" + i : key; d.appendChild(pre);
          box.appendChild(d);
        }
        $("kernels").appendChild(box);
      });
    }
    for (const v of ["step-view", "input-view", "final-view"])
      $(v).addEventListener("dblclick", () => $(v).classList.toggle("fit"));
    $("slider").max = Math.max(1, nsteps);
    buildList();
    if (nsteps) show(1);
    else {
      $("stepno").textContent = "step 0 / 0";
      $("step-view").textContent = "no rule fired";
      for (const b of ["first", "prev", "next", "last", "slider"]) $(b).disabled = true;
    }
    $("first").onclick = () => show(1);
    $("prev").onclick = () => show(cur - 1);
    $("next").onclick = () => show(cur + 1);
    $("last").onclick = () => show(nsteps);
    $("slider").addEventListener("input", () => show(+$("slider").value));
    document.addEventListener("keydown", (e) => {
      if (e.target === $("search") || e.target === $("slider") || e.altKey || e.ctrlKey || e.metaKey) return;
      const k = { ArrowLeft: cur - 1, ArrowRight: cur + 1, Home: 1, End: nsteps }[e.key];
      if (k !== undefined) { e.preventDefault(); show(k); }
    });
    let timer = 0;
    $("search").addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => find($("search").value), 120); });
    $("search").addEventListener("keydown", (e) => { if (e.key === "Escape") { $("search").value = ""; find(""); } });
    document.body.dataset.readyMs = Math.round(performance.now());
    document.body.dataset.ready = "1";
  }

  init();
})();
