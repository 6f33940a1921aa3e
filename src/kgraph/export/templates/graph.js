"use strict";
// kgraph's page. Every string from the reviews reaches the DOM through textContent, a
// vis-network tooltip (innerText) or element.href after a protocol check: never as HTML.
(() => {
  const data = JSON.parse(document.getElementById("kg-data").textContent);
  const $ = (id) => document.getElementById(id);
  const N = data.nodes;
  const E = data.entries;
  const SVG = "http://www.w3.org/2000/svg";
  const kinds = new Map(data.kinds.map(([key, label, colour, shape]) => [key, { key, label, colour, shape }]));
  const drawn = new Set(data.drawn);
  const relations = new Map(data.relations.map(([rel, out, back], k) => [rel, { out, back, k }]));
  const big = N.length > 1500;
  const DIM = { background: "#e5e7eb", border: "#d1d5db" };

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  const words = (name) => name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();
  const attr = (i, name) => N[i].a[name] || [];
  const first = (i, name) => attr(i, name)[0];
  const isPR = (i) => N[i].k === "PullRequest";
  const isCode = (i) => N[i].k === "SourceFile" || N[i].k === "CodeSymbol";
  const labelCount = new Map();
  for (const n of N) labelCount.set(n.l, (labelCount.get(n.l) || 0) + 1);
  const ambiguous = (i) => labelCount.get(N[i].l) > 1 && N[i].r; // name the repository then
  const byName = (a, b) => N[a].l.localeCompare(N[b].l, "en", { numeric: true });
  function short(text, width) {
    // Cut to about `width` Latin characters; CJK characters and emoji count twice. By code
    // point: an emoji is two UTF-16 units, and cutting between them shows a broken glyph.
    let used = 0;
    let at = 0;
    for (const char of text) {
      used += char.codePointAt(0) >= 0x2e80 ? 2 : 1;
      if (used > width) return text.slice(0, at) + "…";
      at += char.length;
    }
    return text;
  }

  // --- structure -------------------------------------------------------------------------
  const adj = N.map(() => []); // [relation, other, +1 outgoing | -1 incoming]
  for (const [s, rel, t] of data.edges) {
    adj[s].push([rel, t, 1]);
    adj[t].push([rel, s, -1]);
  }
  const prsOf = (i) => adj[i].filter(([rel, o]) => drawn.has(rel) && isPR(o)).map(([, o]) => o);
  const shared = N.map((n, i) => isCode(i) && n.k !== "ExternalSymbol" && (first(i, "prCount") || 0) >= 2);
  const inShared = N.map((n) => n.v !== undefined); // shared code and its PRs, with their own layout
  const sharedCount = shared.filter(Boolean).length;
  const prDates = N.map((n) => (n.e || []).map((e) => E[e].date).filter(Boolean));
  const linked = (i, kind) => new Set(adj[i].filter(([, o]) => N[o].k === kind).map(([, o]) => o));
  const topicsOf = N.map((n, i) => (isPR(i) ? linked(i, "Topic") : null));
  const patternsOf = N.map((n, i) => (isPR(i) ? linked(i, "DesignPattern") : null));
  const keys = N.map((n, i) => {
    const out = [n.l];
    for (const name of ["name", "qualifiedName", "path", "prefLabel", "altLabel", "notation", "title"]) {
      for (const v of attr(i, name)) out.push(String(v));
    }
    if (isPR(i) && first(i, "number") !== undefined) out.push("#" + first(i, "number"));
    return out.map((k) => k.toLowerCase());
  });

  function tooltip(i) {
    const n = N[i];
    let text = kinds.get(n.k).label + ": " + n.l;
    if (isPR(i)) {
      if (n.r) text += "\n" + n.r;
      text += "\nTouches " + (n.sc || 0) + " shared code " + (n.sc === 1 ? "entity" : "entities");
    } else if (first(i, "prCount") !== undefined) {
      text += "\nTouched by " + first(i, "prCount") + " PR" + (first(i, "prCount") === 1 ? "" : "s");
    }
    return text;
  }

  // --- the network ---------------------------------------------------------------------
  const state = { view: sharedCount ? "shared" : "all", kinds: new Set(kinds.keys()), repo: "", topic: "", pattern: "", from: "", to: "" };
  const style = new Array(N.length).fill("n"); // n normal, h hit, d dimmed
  const hidden = N.map((n, i) => state.view === "shared" && !inShared[i]); // as refresh() would
  function nodeLook(i, look) {
    const colour = kinds.get(N[i].k).colour;
    const inside = kinds.get(N[i].k).shape === "ellipse"; // the label sits inside the shape
    // vis-network's own selection and hover colours are replaced: its blue reads as a PR.
    const mark = { background: colour, border: "#111827" };
    if (look === "d") return { color: Object.assign({ highlight: mark, hover: mark }, DIM), borderWidth: 1, borderWidthSelected: 2, font: { color: "#e5e7eb", strokeWidth: 0, bold: false } };
    const font = inside ? { color: "#ffffff", strokeWidth: 0 } : { color: look === "h" ? "#111827" : "#1f2937", strokeWidth: 3 };
    if (look === "h") return { color: { background: colour, border: "#111827", highlight: mark, hover: mark }, borderWidth: 4, borderWidthSelected: 4, font: Object.assign({ bold: true }, font) };
    return { color: { background: colour, border: colour, highlight: mark, hover: mark }, borderWidth: 1, borderWidthSelected: 3, font: Object.assign({ bold: false }, font) };
  }
  const at = (i, view) => (view === "shared" && N[i].v ? { x: N[i].v[0], y: N[i].v[1] } : { x: N[i].x, y: N[i].y });
  const visNodes = new vis.DataSet(
    N.map((n, i) => Object.assign(
      { id: i, label: short(n.l, isPR(i) ? 26 : 34), size: n.s, shape: kinds.get(n.k).shape, title: tooltip(i), hidden: hidden[i] },
      at(i, state.view),
      nodeLook(i, "n"),
    )),
  );
  const drawnEdges = data.edges.filter(([, rel]) => drawn.has(rel));
  const edgeStyle = new Array(drawnEdges.length).fill("n");
  const EDGE = { n: { color: "#94a3b8", opacity: 0.6 }, h: { color: "#1e293b", opacity: 1 }, d: { color: "#e2e8f0", opacity: 0.4 } };
  // With a history read, a line the review only names is dashed; what a commit changed is solid.
  const namedOnly = (rel) => data.dashNamed && (rel === "touchesFile" || rel === "mentionsSymbol");
  const visEdges = new vis.DataSet(
    drawnEdges.map(([s, rel, t], j) => ({
      id: j, from: s, to: t, color: EDGE.n, dashes: namedOnly(rel),
      title: words(rel) + (namedOnly(rel) ? " (named in the review, not changed by the PR's commit)" : ""),
    })),
  );
  // Change coupling between drawn files: wider the more they change together; dotted when
  // the pair changes together less in the last 90 days than before.
  const COUPLED = { color: "#0d9488", opacity: 0.75 };
  const coupledWith = N.map(() => []); // [other, degree, trend, weakening]
  (data.coupling || []).forEach(([a, b, degree, trend, weakening], j) => {
    coupledWith[a].push([b, degree, trend, weakening]);
    coupledWith[b].push([a, degree, trend, weakening]);
    const change = trend === null ? "" : "; " + (trend > 0 ? "+" : "") + trend + " points in the last 90 days";
    visEdges.add({
      id: "coupling-" + j, from: a, to: b, color: COUPLED, width: 1 + degree / 25,
      dashes: weakening ? [3, 5] : false, title: "Change together: " + degree + " %" + change + (weakening ? " (weakening)" : ""),
    });
  });
  const network = new vis.Network($("graph"), { nodes: visNodes, edges: visEdges }, {
    autoResize: true,
    physics: false,
    layout: { improvedLayout: false, randomSeed: 7 },
    interaction: { hover: true, tooltipDelay: 100, hideEdgesOnDrag: big, hideEdgesOnZoom: big, multiselect: false },
    nodes: { font: { size: 14, face: "system-ui, sans-serif", strokeWidth: 3, strokeColor: "#ffffff" }, scaling: { label: { drawThreshold: 6 } } },
    edges: { smooth: false, width: 1, hoverWidth: 1.5, selectionWidth: 1.5 },
  });

  // --- state: view, filters, emphasis ------------------------------------------------------
  let emphasis = null; // { hits: Set, around: Set } while a search or a click focuses nodes
  const dates = [...new Set(prDates.flat())].sort();

  function prPasses(i) {
    const n = N[i];
    if (state.repo && n.r !== state.repo) return false;
    if (state.topic !== "" && !topicsOf[i].has(Number(state.topic))) return false;
    if (state.pattern !== "" && !patternsOf[i].has(Number(state.pattern))) return false;
    if (dateNarrowed() && !prDates[i].some((d) => d >= state.from && d <= state.to)) return false;
    return true;
  }
  const dateNarrowed = () => dates.length > 0 && (state.from !== dates[0] || state.to !== dates[dates.length - 1]);
  const prFiltered = () => state.repo || state.topic !== "" || state.pattern !== "" || dateNarrowed();

  function passes(i) {
    if (!state.kinds.has(N[i].k)) return false;
    if (state.view === "shared" && !inShared[i]) return false;
    if (isPR(i)) return prPasses(i);
    if (state.repo && N[i].r && N[i].r !== state.repo) return false;
    if (prFiltered()) return prsOf(i).some(prPasses);
    return true;
  }

  function refresh() {
    const nodeUpdates = [];
    let shown = 0;
    for (let i = 0; i < N.length; i++) {
      const hide = !(passes(i) || (emphasis && emphasis.around.has(i)));
      const look = !emphasis ? "n" : emphasis.hits.has(i) ? "h" : emphasis.around.has(i) ? "n" : "d";
      if (!hide) shown++;
      if (hide !== hidden[i] || look !== style[i]) {
        hidden[i] = hide;
        style[i] = look;
        nodeUpdates.push(Object.assign({ id: i, hidden: hide }, nodeLook(i, look)));
      }
    }
    if (nodeUpdates.length) visNodes.update(nodeUpdates);
    const edgeUpdates = [];
    drawnEdges.forEach(([s, , t], j) => {
      const look = !emphasis ? "n" : emphasis.hits.has(s) || emphasis.hits.has(t) ? "h" : "d";
      if (look !== edgeStyle[j]) {
        edgeStyle[j] = look;
        edgeUpdates.push({ id: j, color: EDGE[look], width: look === "h" ? 2 : 1 });
      }
    });
    if (edgeUpdates.length) visEdges.update(edgeUpdates);
    document.body.dataset.shown = String(shown);
    $("summary").textContent = N.length ? countsLine() + " · " + shown.toLocaleString("en") + " shown" : "This graph has no pull requests or code yet.";
  }

  function focusOn(hits, fit) {
    if (!hits.length) {
      emphasis = null;
      refresh();
      return;
    }
    if (state.view === "shared" && hits.some((h) => !inShared[h])) setView("all");
    const around = new Set(hits);
    for (const h of hits) {
      for (const [rel, o] of adj[h]) if (drawn.has(rel) && (state.view === "all" || inShared[o])) around.add(o);
    }
    emphasis = { hits: new Set(hits), around };
    refresh();
    if (fit) glide([...around]);
  }

  // vis-network advances its own view animations only when something else redraws, and
  // with physics off nothing does: so zoom with our own frames.
  let gliding = 0;
  function glide(ids) {
    const from = { position: network.getViewPosition(), scale: network.getScale() };
    network.fit({ nodes: ids, animation: false });
    if (big) return;
    const to = { position: network.getViewPosition(), scale: network.getScale() };
    network.moveTo(Object.assign({ animation: false }, from));
    const started = performance.now();
    const run = ++gliding;
    const frame = (now) => {
      if (run !== gliding) return;
      const t = Math.min(1, (now - started) / 300);
      const e = t < 0.5 ? 2 * t * t : 1 - 2 * (1 - t) * (1 - t);
      network.moveTo({
        position: { x: from.position.x + (to.position.x - from.position.x) * e, y: from.position.y + (to.position.y - from.position.y) * e },
        scale: from.scale + (to.scale - from.scale) * e,
        animation: false,
      });
      if (t < 1) requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  }

  function fitAll() {
    gliding++;
    // Leave a margin for the labels of the outermost nodes.
    network.fit({ animation: false });
    network.moveTo({ scale: network.getScale() * 0.9 });
  }

  // --- search --------------------------------------------------------------------------------
  const results = $("results");
  function search(raw) {
    const q = raw.trim().toLowerCase();
    results.replaceChildren();
    if (!q) {
      $("status").textContent = "";
      focusOn([], false);
      return;
    }
    const exact = [], partial = [];
    keys.forEach((ks, i) => {
      if (ks.some((k) => k === q)) exact.push(i);
      else if (ks.some((k) => k.includes(q))) partial.push(i);
    });
    const hits = exact.length ? exact : partial;
    hits.sort((a, b) => (isPR(a) - isPR(b)) || (N[b].s - N[a].s) || (a - b));
    $("status").textContent = hits.length
      ? hits.length + (hits.length === 1 ? " match" : " matches") + (hits.length > 30 ? " (first 30 listed)" : "") + "; highlighted with their neighbours"
      : "No match";
    for (const i of hits.slice(0, 30)) results.append(nodeLink(i, ambiguous(i) ? N[i].r : ""));
    focusOn(hits, true);
    if (hits.length === 1) showDetails(hits[0]);
  }
  let pending = 0;
  $("search").addEventListener("input", (event) => {
    clearTimeout(pending);
    pending = setTimeout(() => search(event.target.value), big ? 200 : 60);
  });
  $("search").addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      clearTimeout(pending);
      search(event.target.value);
      const firstHit = results.querySelector("button");
      if (firstHit) firstHit.click();
    } else if (event.key === "Escape") {
      event.target.value = "";
      search("");
    }
  });

  function select(i, fit) {
    focusOn([i], fit); // its neighbourhood shows even where a filter hides it
    network.selectNodes([i], false);
    showDetails(i);
  }
  network.on("click", (params) => {
    if (params.nodes.length) select(params.nodes[0], false);
    else if (!params.edges.length) {
      network.unselectAll();
      const q = $("search").value;
      if (q.trim()) search(q);
      else focusOn([], false);
    }
  });

  // --- legend and filters ----------------------------------------------------------------------
  function swatch(kind, size) {
    const k = kinds.get(kind);
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("width", size);
    svg.setAttribute("height", size);
    svg.setAttribute("viewBox", "0 0 20 20");
    svg.setAttribute("aria-hidden", "true");
    const shapes = {
      dot: ["circle", { cx: 10, cy: 10, r: 8 }],
      square: ["rect", { x: 3, y: 3, width: 14, height: 14 }],
      diamond: ["polygon", { points: "10,1 19,10 10,19 1,10" }],
      triangle: ["polygon", { points: "10,2 19,18 1,18" }],
      triangleDown: ["polygon", { points: "1,2 19,2 10,18" }],
      hexagon: ["polygon", { points: "5,2 15,2 19,10 15,18 5,18 1,10" }],
      star: ["polygon", { points: "10,1 12.6,7 19,7.3 14,11.4 15.6,18 10,14.3 4.4,18 6,11.4 1,7.3 7.4,7" }],
      ellipse: ["ellipse", { cx: 10, cy: 10, rx: 9, ry: 6 }],
    };
    const [tag, attrs] = shapes[k.shape] || shapes.dot;
    const shape = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attrs)) shape.setAttribute(name, value);
    shape.setAttribute("fill", k.colour);
    svg.append(shape);
    return svg;
  }
  const kindCount = new Map();
  for (const n of N) kindCount.set(n.k, (kindCount.get(n.k) || 0) + 1);
  for (const k of kinds.values()) {
    const label = el("label");
    const box = el("input");
    box.type = "checkbox";
    box.checked = true;
    box.dataset.kind = k.key;
    box.addEventListener("change", () => {
      if (box.checked) state.kinds.add(k.key);
      else state.kinds.delete(k.key);
      refresh();
    });
    const count = kindCount.get(k.key) || 0;
    if (!count) label.className = "empty";
    label.append(box, swatch(k.key, 14), document.createTextNode(k.label + " " + count.toLocaleString("en")));
    $("kinds").append(label);
  }

  function fillSelect(id, box, options, allLabel) {
    const select = $(id);
    if (options.length < (id === "f-repo" ? 2 : 1)) {
      $(box).hidden = true;
      return;
    }
    select.append(new Option(allLabel, ""));
    for (const [value, text] of options) select.append(new Option(short(text, 40), value));
  }
  const byLabel = (kind) => N.map((n, i) => [String(i), n.l, n.k]).filter(([, , k]) => k === kind).sort((a, b) => a[1].localeCompare(b[1]));
  const repos = [...new Set(N.filter((n) => n.k === "PullRequest" && n.r).map((n) => n.r))].sort();
  fillSelect("f-repo", "f-repo-box", repos.map((r) => [r, r]), "all repositories");
  fillSelect("f-topic", "f-topic-box", byLabel("Topic"), "all topics");
  fillSelect("f-pattern", "f-pattern-box", byLabel("DesignPattern"), "all patterns");
  if (dates.length > 1) {
    for (const d of dates) {
      $("f-from").append(new Option(d, d));
      $("f-to").append(new Option(d, d));
    }
  } else {
    $("f-date-box").hidden = true;
  }
  function resetFilters() {
    Object.assign(state, { repo: "", topic: "", pattern: "", from: dates[0] || "", to: dates[dates.length - 1] || "" });
    for (const id of ["f-repo", "f-topic", "f-pattern"]) $(id).value = "";
    $("f-from").value = state.from;
    $("f-to").value = state.to;
    state.kinds = new Set(kinds.keys());
    for (const box of $("kinds").querySelectorAll("input")) box.checked = true;
  }
  const bind = (id, key) => $(id).addEventListener("change", (event) => {
    state[key] = event.target.value;
    refresh();
  });
  bind("f-repo", "repo");
  bind("f-topic", "topic");
  bind("f-pattern", "pattern");
  bind("f-from", "from");
  bind("f-to", "to");
  $("reset").addEventListener("click", () => {
    resetFilters();
    refresh();
  });
  function setView(view) {
    state.view = view;
    for (const radio of document.querySelectorAll("input[name=view]")) radio.checked = radio.value === view;
    visNodes.update(N.map((n, i) => i).filter((i) => inShared[i]).map((i) => Object.assign({ id: i }, at(i, view))));
  }
  for (const radio of document.querySelectorAll("input[name=view]")) {
    radio.checked = radio.value === state.view;
    radio.addEventListener("change", () => {
      setView(radio.value);
      emphasis = null;
      refresh();
      fitAll();
    });
  }
  $("shared-label").textContent = "Shared code (" + sharedCount + ")";
  if (data.dashNamed) {
    // The two kinds of code links, as they are drawn.
    const legend = $("edge-legend");
    for (const [dash, text] of [["", "changed by the PR's commit"], ["5,4", "named in the review only"]]) {
      const svg = document.createElementNS(SVG, "svg");
      svg.setAttribute("width", "28");
      svg.setAttribute("height", "8");
      svg.setAttribute("aria-hidden", "true");
      const line = document.createElementNS(SVG, "line");
      for (const [k, v] of Object.entries({ x1: 1, y1: 4, x2: 27, y2: 4, stroke: "#475569", "stroke-width": 2 })) line.setAttribute(k, v);
      if (dash) line.setAttribute("stroke-dasharray", dash);
      svg.append(line);
      const item = el("span");
      item.append(svg, document.createTextNode(" " + text));
      legend.append(item);
    }
    legend.hidden = false;
  }

  // --- details panel -----------------------------------------------------------------------------
  function nodeLink(i, extra) {
    const li = el("li");
    const button = el("button");
    button.type = "button";
    button.append(swatch(N[i].k, 11), document.createTextNode(" " + N[i].l));
    button.title = kinds.get(N[i].k).label;
    button.addEventListener("click", () => select(i, true));
    li.append(button);
    if (extra) li.append(el("span", extra, "count"));
    return li;
  }
  function safeLink(url, text) {
    let parsed;
    try {
      parsed = new URL(String(url));
    } catch {
      return el("span", url);
    }
    if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return el("span", url);
    const a = el("a", text || parsed.href);
    a.href = parsed.href;
    a.rel = "noopener noreferrer";
    a.target = "_blank";
    return a;
  }
  const LIST_LIMIT = 60;
  function section(box, heading, items) {
    if (!items.length) return;
    box.append(el("h3", heading));
    const list = el("ol", undefined, "links");
    list.append(...items.slice(0, LIST_LIMIT));
    box.append(list);
    if (items.length > LIST_LIMIT) {
      const more = el("button", "Show all " + items.length.toLocaleString("en"), "more");
      more.type = "button";
      more.addEventListener("click", () => {
        list.append(...items.slice(LIST_LIMIT));
        more.remove();
      });
      box.append(more);
    }
  }
  function entryBlock(e, withTitle) {
    const entry = E[e];
    const frag = document.createDocumentFragment();
    frag.append(el("div", entry.source + ":" + entry.line + (entry.date ? " · " + entry.date : ""), "source"));
    if (withTitle && entry.title) frag.append(el("div", entry.title, "meta"));
    if (entry.text) frag.append(el("p", entry.text, "text"));
    return frag;
  }
  const SHOWN_ELSEWHERE = new Set(["title", "number", "url", "readingAdvice", "recommendedFor", "followUp", "prCount", "isExternal", "sourceUrl", "line", "cue", "sha256", "mergeBasis"]);
  function commitLine(c) {
    // Short sha, date, subject, and a link to the commit.
    const line = el("div", undefined, "meta commit");
    line.append(el("code", c.sha.slice(0, 10)), document.createTextNode(" " + (c.date ? c.date + " · " : "") + c.subject + " "));
    if (c.url) line.append(safeLink(c.url, "commit"));
    return line;
  }
  function changedFile([path, change, added, removed, previous, index]) {
    const li = index !== null && index !== undefined ? nodeLink(index) : el("li", path);
    const parts = [];
    if (added !== null && added !== undefined) parts.push("+" + added + " −" + removed);
    if (change && change !== "modified") parts.push(change + (previous ? " from " + previous : ""));
    if (parts.length) li.append(el("span", parts.join(", "), "count"));
    return li;
  }
  const ADVICE = { "close-read": "Worth a close read", skim: "Skim" };

  function showDetails(i) {
    const n = N[i];
    const box = $("details");
    box.replaceChildren();
    box.dataset.node = n.id;
    box.append(el("h2", n.l));
    const kind = el("div", undefined, "kind");
    kind.append(swatch(n.k, 13), document.createTextNode(kinds.get(n.k).label + (n.r ? " · " + n.r : "")));
    box.append(kind);
    if (isPR(i)) {
      const line = el("div", undefined, "meta");
      if (first(i, "number") !== undefined) line.append(document.createTextNode("#" + first(i, "number") + " "));
      for (const url of attr(i, "url")) line.append(safeLink(url));
      if (line.childNodes.length) box.append(line);
      for (const advice of attr(i, "readingAdvice")) {
        box.append(el("span", ADVICE[advice] || advice, "advice" + (advice === "skim" ? " skim" : "")));
      }
      for (const who of attr(i, "recommendedFor")) box.append(el("div", "Recommended for: " + who, "meta"));
      if (n.e && n.e.length) {
        box.append(el("h3", n.e.length > 1 ? "Summary (" + n.e.length + " digests)" : "Summary"));
        for (const e of n.e) box.append(entryBlock(e, E[e].title !== n.l));
      }
      for (const f of attr(i, "followUp")) box.append(el("div", "Follow-up: " + f, "meta"));
      if (n.m) {
        const basis = first(i, "mergeBasis");
        box.append(el("h3", "Merged as" + (basis ? " (found by " + basis + ")" : "")));
        box.append(commitLine(n.m));
        section(box, "Changed files (" + (n.cf || []).length + ")", (n.cf || []).map(changedFile));
      } else if (n.cc) {
        box.append(el("h3", "Candidate commits (" + n.cc.length + "): none stands out"));
        for (const c of n.cc) box.append(commitLine(c));
      }
    } else {
      const count = first(i, "prCount");
      if (count !== undefined) box.append(el("div", "Touched by " + count + " PR" + (count === 1 ? "" : "s") + (shared[i] ? " — shared code" : ""), "meta"));
      if (first(i, "isExternal") === true) box.append(el("div", "External: standard library, builtin or third-party", "meta"));
      const where = sourceLocation(i);
      if (where) box.append(el("div", "Source: " + where, "meta code"));
      for (const url of attr(i, "sourceUrl")) {
        const line = el("div", undefined, "meta");
        line.append(safeLink(url, "Open the source"));
        box.append(line);
      }
    }
    if (n.rk && n.rk.length) {
      // Files that usually change with what this PR changed, which it left untouched and
      // its review does not name: what a reviewer may be missing.
      section(box, "Risks (" + n.rk.length + ")", n.rk.map(([partner, file, degree]) => {
        const li = el("li", partner, "code");
        li.append(el("span", degree + " % with " + file, "sub"));
        return li;
      }));
    }
    if (coupledWith[i].length) {
      const partners = [...coupledWith[i]].sort((p, q) => q[1] - p[1] || byName(p[0], q[0]));
      section(box, "Changes together with (" + partners.length + ")", partners.map(([o, degree, trend, weakening]) => {
        const change = trend === null ? "" : ", " + (trend > 0 ? "+" : "") + trend + " lately";
        return nodeLink(o, degree + " %" + change + (weakening ? " (weakening)" : ""));
      }));
    }
    // Relations, grouped under the headings the page data gives.
    const groups = new Map();
    const known = [...adj[i]].sort((p, q) => (relations.has(p[0]) ? relations.get(p[0]).k : 99) - (relations.has(q[0]) ? relations.get(q[0]).k : 99));
    for (const [rel, o, dir] of known) {
      const r = relations.get(rel);
      const heading = r ? (dir > 0 ? r.out : r.back) : (dir > 0 ? words(rel) : words(rel) + " (from)");
      if (!groups.has(heading)) groups.set(heading, []);
      groups.get(heading).push(o);
    }
    for (const [heading, others] of groups) {
      const unique = [...new Set(others)].sort((a, b) => (N[b].s - N[a].s) || byName(a, b));
      section(box, heading + " (" + unique.length + ")", unique.map((o) => {
        const count = first(o, "prCount");
        const rejected = attr(o, "rejectedAlternative");
        const evidence = patternEvidence(i, o);
        const extra = evidence || (isCode(o) && count > 1 ? "shared by " + count + " PRs" : rejected.length ? "rather than " + rejected.join("; ") : "");
        const li = nodeLink(o, extra);
        if (!isPR(i) && isPR(o)) {
          for (const e of n.e || []) if (E[e].pr === o) li.append(el("span", E[e].source + ":" + E[e].line, "sub"));
        }
        return li;
      }));
    }
    if (!isPR(i) && n.e) {
      const orphan = n.e.filter((e) => E[e].pr === undefined);
      if (orphan.length) {
        box.append(el("h3", "Mentioned in"));
        for (const e of orphan) box.append(entryBlock(e, true));
      }
    }
    // Every other attribute, so that new properties show up without a page change.
    const dl = el("dl");
    for (const [name, values] of Object.entries(n.a).sort()) {
      if (SHOWN_ELSEWHERE.has(name) || (isPR(i) && name === "repositoryBasis" && values[0] === "digest")) continue;
      dl.append(el("dt", words(name)));
      dl.append(el("dd", values.join("\n")));
    }
    if (dl.childNodes.length) {
      box.append(el("h3", "Properties"));
      box.append(dl);
    }
  }
  // How sure a PR's evidence of a pattern is, and where it comes from, between a PR and
  // a pattern either way round: "confidence 0.85 · review text".
  const EVIDENCE = { text: "review text", change: "change" };
  function patternEvidence(i, o) {
    const [pr, pattern] = isPR(i) ? [i, o] : [o, i];
    const found = isPR(pr) && N[pr].pe ? N[pr].pe.find((p) => p[0] === pattern) : undefined;
    if (!found) return "";
    return "confidence " + Number(found[1]).toFixed(2) + " · " + found[2].map((k) => EVIDENCE[k] || k).join(" + ");
  }
  function sourceLocation(i) {
    const line = first(i, "line");
    let path = first(i, "path");
    if (path === undefined) {
      const file = adj[i].find(([rel, , dir]) => rel === "definedIn" && dir > 0);
      if (file) path = first(file[1], "path") || N[file[1]].l;
    }
    if (path === undefined && line === undefined && first(i, "resolution") === undefined) return "";
    let text = path === undefined ? "" : String(path);
    if (line !== undefined) text += ":" + line;
    const resolution = first(i, "resolution");
    if (resolution !== undefined) text += (text ? " " : "") + "(" + resolution + ")";
    return text;
  }

  function showOverview() {
    const box = $("details");
    box.replaceChildren();
    delete box.dataset.node;
    const hot = N.map((n, i) => i).filter((i) => shared[i]).sort((a, b) => (first(b, "prCount") - first(a, "prCount")) || byName(a, b));
    if (hot.length) {
      box.append(el("h3", "Hot spots: code touched by the most PRs"));
      const list = el("ol", undefined, "links");
      for (const i of hot.slice(0, 15)) {
        const where = ambiguous(i) ? " · " + N[i].r : "";
        list.append(nodeLink(i, first(i, "prCount") + " PRs" + where));
      }
      box.append(list);
    } else {
      box.append(el("p", "No file or symbol is touched by two or more PRs in this graph.", "hint"));
    }
    box.append(el("p", "Click a node, or search, to see what the reviews say about it. Node size: for PRs, the shared code they touch; for code, the PRs touching it. Hover an edge for its relation.", "hint"));
  }

  function countsLine() {
    const parts = [];
    for (const k of kinds.values()) {
      const c = kindCount.get(k.key);
      if (c) parts.push(c.toLocaleString("en") + " " + k.label.toLowerCase() + (c === 1 ? "" : "s"));
    }
    return parts.join(" · ");
  }

  // --- start ---------------------------------------------------------------------------------------
  $("title").textContent = data.title;
  if (data.note) {
    $("note").textContent = data.note;
    $("note").hidden = false;
  }
  $("all-label").textContent = "Everything (" + N.length.toLocaleString("en") + ")";
  resetFilters();
  showOverview();
  refresh();
  fitAll();
  if (data.focus.length) {
    $("search").value = data.focus[0];
    search(data.focus[0]);
  }
  network.once("afterDrawing", () => {
    window.kgraphReadyAt = performance.now();
    document.body.dataset.ready = "true";
  });
  // For tests and the curious: the page's data and vis-network objects.
  window.kgraph = { data, network, nodes: visNodes, edges: visEdges, state };
})();
