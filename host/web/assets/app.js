// cairn's web view: vanilla JS over the JSON API (docs/http-api.md).
// Every value from the API is put in the page as text, never as markup.
"use strict";

let token = sessionStorage.getItem("cairn-token") || "";
let readOnly = true;
let stop = () => {}; // ends the current page's polling and streams

// takeToken keeps the token of a URL ending in #token=TOKEN for this tab
// and takes it out of the URL (and so out of the tab's history); a page
// may follow after "&": #token=TOKEN&/agent/ID. It runs when the page
// loads and on every change of the fragment: opened in a tab that already
// shows the page, such a URL changes only the fragment, and nothing
// reloads.
function takeToken() {
  if (!location.hash.startsWith("#token=")) return false;
  const [t, page] = location.hash.slice(7).split("&");
  token = decodeURIComponent(t);
  sessionStorage.setItem("cairn-token", token);
  history.replaceState(null, "", "/#" + (page || "/"));
  return true;
}
takeToken();

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const k of kids.flat()) if (k != null) e.append(k instanceof Node ? k : String(k));
  return e;
}

// api reads path, or posts body to it. Given tag (the ETag of the last
// answer, or ""), it answers null for 304, unchanged, and else the value
// with its ETag: {value, etag}.
async function api(path, body, tag) {
  const opts = { headers: {} };
  if (token) opts.headers.Authorization = "Bearer " + token;
  if (tag) opts.headers["If-None-Match"] = tag;
  if (body !== undefined) {
    opts.method = "POST";
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const r = await fetch(path, opts);
  if (tag !== undefined && r.status === 304) return null;
  const v = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(v.error || r.statusText);
  return tag !== undefined ? { value: v, etag: r.headers.get("ETag") || "" } : v;
}

// apiPage reads one page of a list: its items, and the URL of the next
// page that its Link header names while more remain (or null).
async function apiPage(path) {
  const r = await fetch(path, { headers: token ? { Authorization: "Bearer " + token } : {} });
  const v = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(v.error || r.statusText);
  const next = /<([^>]*)>;\s*rel="next"/.exec(r.headers.get("Link") || "");
  return { items: v, next: next ? next[1] : null };
}

// pages reads the list at path, from its first page, pages pages of it,
// and what follows them: the next page's URL, or null.
async function pages(path, n) {
  let items = [];
  for (let i = 0; path && i < n; i++) {
    const p = await apiPage(path);
    items = items.concat(p.items);
    path = p.next;
  }
  return { items, next: path };
}

const enc = encodeURIComponent;
const lookEvery = 250; // ms: the least time between two looks at an agent (agentPage)
const tokens = (u) => (u ? (u.input_tokens || 0) + (u.output_tokens || 0) : 0);
// count is n with its noun, singular for one, as cairn's CLI writes it
// (internal/plural): "1 round", "2 rounds".
const count = (n, noun, many) => n + " " + (n === 1 ? noun : many || noun + "s");
const cost = (u) => (u && u.cost_micro_usd ? "$" + (u.cost_micro_usd / 1e6).toFixed(4) : "");
const when = (t) => (t ? new Date(t).toLocaleString() : "");
const badge = (s) => el("span", { class: "status " + s }, s.replace("_", " "));
// indent moves a sub-agent's node right by its depth in the tree (through
// the CSSOM: the page's policy refuses style attributes).
const indent = (node, depth) => { if (depth) node.style.paddingLeft = 0.4 + 1.2 * depth + "em"; return node; };
const agentLink = (id) => el("a", { href: "#/agent/" + enc(id) }, id);
// net words a call's HTTP use, as `cairn show` does.
const net = (n) => (n ? " · " + count(n.requests, "HTTP request") + ", " + count(n.sent_bytes || 0, "byte") + " sent, " + (n.received_bytes || 0) + " received" + (n.refused ? ", " + n.refused + " refused" : "") : "");

// every runs fn now and every ms after, never twice at once.
function every(ms, fn) {
  let busy = false; // a tick that comes while the last one's fn runs is skipped
  const tick = async () => {
    if (busy) return;
    busy = true;
    try { await fn(); } finally { busy = false; }
  };
  tick();
  const t = setInterval(tick, ms);
  return () => clearInterval(t);
}

// The agent list, read again every two seconds: its first page, and one
// more each time "more agents" is asked for.
function listPage(main) {
  const body = el("tbody");
  const more = el("div");
  let shown = 1; // the pages of the list shown
  main.replaceChildren(el("h2", {}, "Agents"), el("table", {},
    el("thead", {}, el("tr", {}, el("th", {}, "agent"), el("th", {}, "status"), el("th", {}, "rounds"),
      el("th", { class: "wide" }, "tokens"), el("th", { class: "wide" }, "labels"), el("th", { class: "wide" }, "updated"))),
    body), more);
  const load = async () => {
    try {
      const { items: agents, next } = await pages("/api/agents", shown);
      more.replaceChildren(...(next ? [el("button", { class: "more", onclick: () => { shown++; load(); } }, "more agents")] : []));
      body.replaceChildren(...agents.map((a) => el("tr", { "data-agent": a.agent },
        indent(el("td", {}, a.depth ? "└ " : null, el("a", { href: "#/agent/" + enc(a.agent) }, a.agent),
          a.lineage ? el("div", { class: "muted" }, "forked from " + a.lineage.agent + " at round " + a.lineage.round) : null), a.depth),
        el("td", {}, badge(a.status)),
        el("td", {}, a.rounds),
        el("td", { class: "wide" }, tokens(a.usage), " ", cost(a.usage)),
        el("td", { class: "wide" }, Object.entries(a.labels || {}).map(([k, v]) => k + "=" + v).join(" ")),
        el("td", { class: "wide" }, when(a.updated)))));
      if (!agents.length) body.replaceChildren(el("tr", {}, el("td", { colspan: 6, class: "muted" }, "no agents in this store")));
    } catch (e) {
      body.replaceChildren(el("tr", {}, el("td", { colspan: 6, class: "error" }, e.message)));
    }
  };
  return every(2000, load);
}

// The timeline: the agent's events as they were committed, live while a
// process runs it.
class Timeline {
  constructor(box, onChange) {
    this.box = box; this.onChange = onChange; this.seen = 0; this.calls = {}; this.text = null; this.src = null;
  }
  follow() {
    if (this.src) return;
    this.src = new EventSource(location.origin + "/api/agents/" + enc(this.agent) + "/events?follow=1&after=" + this.seen);
    this.src.onmessage = (m) => { this.seen = Number(m.lastEventId) || this.seen + 1; this.add(JSON.parse(m.data)); };
    this.src.addEventListener("end", () => this.close());
    this.src.onerror = () => this.close();
  }
  close() { if (this.src) { this.src.close(); this.src = null; } }
  row(cls, ...kids) {
    const d = el("div", { class: cls }, this.sub ? el("span", { class: "muted" }, "└ " + this.sub + ": ") : null, ...kids);
    if (this.sub) d.style.marginLeft = 1.2 * (this.depth || 1) + "em";
    this.box.append(d); return d;
  }
  // callOf keys a call by its agent and id: a sub-agent's calls may have
  // the ids of its parent's (a script model, or an OpenAI-compatible
  // server, numbers them from the start in every agent).
  callOf(e) { return (e.agent || "") + "\n" + e.call.id; }
  add(e) {
    // A run's events include its sub-agents', each named by its agent.
    this.sub = e.agent && e.agent !== this.agent ? e.agent : null;
    this.depth = e.depth;
    // A piece of model text goes on the row of the text before it only
    // if that is its agent's: sub-agents side by side interleave theirs.
    if (e.type !== "model_text" || e.agent !== this.textOf) this.text = null;
    this.textOf = e.agent;
    switch (e.type) {
      case "run_start": this.row("mark", "run " + e.run + " started " + when(e.time) + (e.resumed_from ? ", resuming " + e.resumed_from : "")); break;
      case "model_text":
        if (!this.text) this.text = this.row("text", el("span", { class: "mark" }, "model: "));
        this.text.append(e.text); break;
      case "tool_start": {
        const out = el("div");
        this.calls[this.callOf(e)] = out;
        this.row("call", el("b", {}, e.call.tool), " ", el("span", { class: "mark" }, e.call.id), el("pre", {}, e.call.input || ""), out);
        break;
      }
      case "tool_end": {
        // A call whose start the timeline lacks (its line garbled on disk)
        // gets a row of its own.
        const started = this.calls[this.callOf(e)];
        const out = started || this.row("call", el("b", {}, e.call.tool), " ", el("span", { class: "mark" }, e.call.id));
        const marks = { error: "✗ error", conflict: "✗ conflict: changes refused", unsettled: "… unsettled: resume settles its changes" };
        (started ? out.parentNode : out).classList.toggle("error", e.call.outcome === "error" || e.call.outcome === "conflict");
        out.append(el("div", { class: "mark" }, (marks[e.call.outcome] || "✓ ok") + " · " + (e.call.duration_ms || 0).toFixed(1) + " ms" + net(e.call.net)),
          el("pre", {}, e.call.output || ""));
        break;
      }
      case "context_compacted": {
        const c = e.compaction || {};
        this.row("mark", "· context: for round " + c.round + ", the messages before message " + (c.from + 1) +
          (c.summary ? " were summarised" : " were left out") + " (about " + (c.before || 0) + " → " + count(c.after || 0, "token") + ")");
        break;
      }
      case "effects_applied": {
        const out = this.calls[this.callOf(e)];
        const line = el("div", { class: "mark" }, "↳ changed " + (e.paths || []).join(", "));
        out ? out.append(line) : this.row("mark", e.call.id, " ", line);
        break;
      }
      case "approval_required": this.row("mark", "? " + e.call.id + " " + e.call.tool + " needs approval"); break;
      case "approval_decided": this.row("mark", e.status + " " + e.call.id + (e.reason ? ": " + e.reason : "")); break;
      case "agent_resumed": this.resumed(e); break;
      case "round_end": this.row("mark", "· round " + (e.round || 0) + " committed · " + count(tokens(e.usage), "token")); break;
      case "warning": this.row("mark error", "warning: " + e.text); break;
      case "run_end": this.row("mark", e.status + " after " + count(e.round || 0, "round") + (e.reason ? " · " + e.reason : "")); break;
    }
    if (["round_end", "run_end", "approval_required", "run_start"].includes(e.type)) this.onChange();
  }
  resumed(e) {
    const d = this.row("mark", "resume (" + e.strategy + ") from the boundary after round " + (e.round || 0));
    for (const id of e.finished || []) d.append(el("div", {}, "kept " + id + ": it had finished"));
    for (const id of e.applied || []) d.append(el("div", {}, "applied " + id + ": its changes reached the workspace now"));
    for (const id of e.awaiting || []) d.append(el("div", {}, "waiting " + id + ": it needs approval, or has it and runs now"));
    for (const s of e.sealed || []) d.append(el("div", {}, "sealed " + s.call + " " + s.tool + ": was " + s.phase + ", effects " + s.effects + "; " + s.recommendation));
  }
}

function agentPage(main, id) {
  const head = el("div"), actions = el("div"), approvals = el("section"), timeline = el("div", { class: "timeline" });
  const diff = el("section"), runs = el("section"), msg = el("div", { class: "error" });
  main.replaceChildren(head, msg, actions, approvals, el("section", {}, el("h2", {}, "Timeline"), timeline), diff, runs);
  const tl = new Timeline(timeline, () => refresh());
  tl.agent = id;
  const act = (path, body) => api("/api/agents/" + enc(id) + path, body).then(() => { msg.textContent = ""; refresh(); }, (e) => { msg.textContent = e.message; });

  // The page is made anew, and the events, runs and diff read again, only
  // when the agent has changed since the last look: a look that sends
  // the ETag of the last one is answered 304, with no body, while the
  // agent stays as it was. (The answers are not cached: no-store.)
  let tag = "";
  // One look at a time, and at most one every lookEvery ms: a change
  // seen while a look is in flight or too recent (a run's round_end
  // events come by the hundred) asks for one more look after it.
  // Once the page is left (stopped), a look still to come does nothing:
  // it would follow the agent's events again for a page no one sees.
  let looking = null, again = false, lastLook = 0, stopped = false;
  let kidPages = 1; // the pages of its sub-agents shown
  // The pages of its sub-agents past the first, as last read: the URL
  // of the first of them and what they held. The agent's answer is 304
  // while it and its first page are unchanged; these are read anew at
  // each look, and the page shown anew when they changed.
  let kidsFrom = null, moreKids = "";
  function refresh() {
    if (stopped) return Promise.resolve();
    if (looking) { again = true; return looking; }
    const wait = Math.max(0, lastLook + lookEvery - Date.now());
    looking = new Promise((r) => setTimeout(r, wait)).then(() => { lastLook = Date.now(); return look(); })
      .finally(() => { looking = null; if (again) { again = false; refresh(); } });
    return looking;
  }
  async function look() {
    let a;
    try { a = await api("/api/agents/" + enc(id), undefined, tag); } catch (e) { msg.textContent = e.message; return; }
    if (stopped) return;
    if (a === null) {
      if (kidsFrom && kidPages > 1) {
        const p = await pages(kidsFrom, kidPages - 1).catch(() => null);
        if (p && !stopped && JSON.stringify(p) !== moreKids) { tag = ""; again = true; }
      }
      return;
    }
    tag = a.etag;
    a = a.value;
    // The first page of its sub-agents comes with it; the pages more
    // asked for are read after it.
    let kids = a.children || [], kidsNext = a.children_next || null;
    kidsFrom = kidsNext;
    if (kidsNext && kidPages > 1) {
      try { const p = await pages(kidsNext, kidPages - 1); moreKids = JSON.stringify(p); kids = kids.concat(p.items); kidsNext = p.next; } catch (e) { msg.textContent = e.message; }
      if (stopped) return;
    }
    head.replaceChildren(el("div", {}, el("h2", {}, a.agent, " ", badge(a.status)),
      el("div", { class: "muted" }, count(a.rounds, "round") + " · " + count(a.tool_calls, "tool call") + " · " + count(tokens(a.usage), "token") + " " + cost(a.usage)),
      a.reason ? el("div", { class: "muted" }, a.reason) : null,
      a.lineage ? el("div", { class: "muted" }, "forked from ", agentLink(a.lineage.agent), " at round " + a.lineage.round) : null,
      a.delegated_by ? el("div", { class: "muted" }, "sub-agent " + (a.delegated_by.name || "") + " of ", agentLink(a.delegated_by.agent),
        ", made by its call " + a.delegated_by.call + " · depth " + a.delegated_by.depth) : null,
      kids.length ? el("div", { class: "children" }, "sub-agents: ",
        kids.map((k) => el("span", { "data-child": k.agent }, agentLink(k.agent), " ", badge(k.status), " ")),
        kidsNext ? el("button", { class: "more", onclick: () => { kidPages++; tag = ""; refresh(); } }, "more sub-agents") : null) : null));
    actions.replaceChildren();
    if (!readOnly) {
      if (["paused", "awaiting_approval", "interrupted", "failed"].includes(a.status)) actions.append(el("button", { onclick: () => act("/resume", {}) }, "Resume"));
      if (a.held || a.status === "running") actions.append(el("button", { onclick: () => act("/pause", {}) }, "Pause"));
      actions.append(el("button", { onclick: () => act("/snapshot", {}) }, "Snapshot"));
    }
    showApprovals(a.awaiting || []);
    // Not following: read what was added since, and follow if a run goes
    // on. A run that began and ended between two looks is read too.
    tl.follow();
    loadRuns(); loadDiff();
  }
  // The calls awaiting a decision are put in the page anew only when
  // they change: a reason being typed for a denial, and the field's
  // focus, stay while the page reads the agent again.
  let asked = "";
  function showApprovals(awaiting) {
    const key = JSON.stringify(awaiting.map((req) => [req.agent, req.round, req.call.id, req.call.tool, req.call.input]));
    if (key === asked) return;
    asked = key;
    approvals.replaceChildren(...awaiting.map((req) => approval(req)));
  }
  function approval(req) {
    const reason = el("input", { type: "text", placeholder: "reason (for a denial)" });
    return el("div", { class: "approval", "data-call": req.call.id }, el("b", {}, req.call.tool), " ", req.call.id, " needs approval",
      el("pre", {}, req.call.input || ""),
      readOnly ? null : [reason, el("br"),
        el("button", { class: "approve", onclick: () => act("/approvals/" + enc(req.call.id) + "/approve", {}) }, "Approve"),
        el("button", { class: "deny", onclick: () => act("/approvals/" + enc(req.call.id) + "/deny", { reason: reason.value }) }, "Deny")]);
  }
  async function loadRuns() {
    const list = await api("/api/agents/" + enc(id) + "/runs").catch(() => []);
    runs.replaceChildren(el("h2", {}, "Runs"), el("table", {}, list.map((r) => el("tr", {},
      el("td", {}, r.run, r.resumed_from ? el("div", { class: "muted" }, "resumed " + r.resumed_from + " (" + r.strategy + ")") : null),
      el("td", { class: "wide" }, when(r.started)), el("td", {}, count(r.rounds, "round")),
      el("td", {}, badge(r.status), r.reason ? " " + r.reason : "")))));
  }
  async function loadDiff() {
    try {
      const d = await api("/api/agents/" + enc(id) + "/diff");
      diff.replaceChildren(el("h2", {}, "Round " + d.round + " changed"), ...(d.note ? [el("div", { class: "muted" }, d.note)] : []), ...d.changes.map((c) => el("div", { class: "diff" },
        el("b", {}, c.op + " " + c.path), el("span", { class: "mark" }, " (" + c.call + ")" + (c.cut ? " · cut short" : "")),
        c.binary || c.too_large ? el("pre", {}, (c.binary ? "binary: " : "too large to show: ") + c.before_size + " → " + count(c.after_size, "byte"))
          : c.lines ? el("pre", {}, c.lines.map((l) => el("div", { class: l[0] === "+" ? "add" : l[0] === "-" ? "del" : "" }, l))) : null)));
    } catch { diff.replaceChildren(); }
  }
  tl.follow();
  const poll = every(2000, () => { if (!tl.src) refresh(); });
  return () => { stopped = true; poll(); tl.close(); };
}

async function route() {
  stop();
  const main = document.getElementById("main");
  const m = location.hash.match(/^#\/agent\/(.+)$/);
  stop = m ? agentPage(main, decodeURIComponent(m[1])) : listPage(main);
}

// showMode says what the tab may do: steer with its token, or only
// watch. Until the server has said whether it is read-only, nothing.
let info = null;
function showMode() {
  if (!info) return;
  readOnly = info.read_only || !token;
  document.getElementById("mode").textContent = info.read_only ? "read-only" : !token ? "watching only: this tab has no token (open /#token=TOKEN with the token cairn serve printed)" : "";
}

api("/api/info").then((i) => { info = i; showMode(); }).catch(() => {}).finally(() => {
  window.addEventListener("hashchange", () => { if (takeToken()) showMode(); route(); });
  route();
});
