// Anvil's pages: live refresh from the server's event stream, and every
// change sent to the MAAS API with the session's CSRF token. The server
// renders all HTML; this file only fetches it and calls the API.
"use strict";

const API = "/MAAS/api/2.0/";

function csrf() {
  const m = document.querySelector('meta[name="csrf-token"]');
  return m ? m.content : "";
}

// api calls the MAAS API as the logged-in user. body is a URLSearchParams
// or FormData (file uploads); the answer is {ok, status, data, text}.
async function api(method, path, body) {
  const opts = { method, credentials: "same-origin", headers: { "X-CSRFToken": csrf(), "Accept": "application/json" } };
  if (body !== undefined) opts.body = body;
  const res = await fetch(API + path, opts);
  if (res.status === 401) { toLogin(); }
  const text = await res.text();
  let data = null;
  try { data = JSON.parse(text); } catch (e) { data = null; }
  return { ok: res.ok, status: res.status, data, text: text.trim() };
}

function toLogin() {
  location.href = "/MAAS/login?next=" + encodeURIComponent(location.pathname + location.search);
}

// errorText turns an API answer into words: MAAS answers field errors as
// {"field": ["message"]} and other errors as plain text.
function errorText(r) {
  if (r.data && typeof r.data === "object" && !Array.isArray(r.data)) {
    return Object.entries(r.data).map(([k, v]) => k + ": " + [].concat(v).join(" ")).join("; ");
  }
  return r.text || ("HTTP " + r.status);
}

// ---- live regions -------------------------------------------------------

// Elements with data-live hold server-rendered HTML that is fetched again
// when the stream names a state other than the one they show
// (data-state), at most one round of fetches at a time. force fetches
// regardless, after an action of this page.
const live = { busy: false, again: false, latest: "" };

async function refreshLive(force) {
  if (live.busy) { live.again = true; return; }
  live.busy = true;
  try {
    for (const el of document.querySelectorAll("[data-live]")) {
      if (!force && live.latest && el.dataset.state === live.latest) continue;
      const res = await fetch(el.dataset.live, { credentials: "same-origin", headers: { "Accept": "text/html" } });
      if (res.status === 401) { toLogin(); return; }
      if (!res.ok) continue;
      const html = await res.text();
      const checked = new Set([...el.querySelectorAll('input[name="machine"]:checked')].map(c => c.value));
      el.innerHTML = html;
      el.dataset.state = res.headers.get("X-Anvil-State") || "";
      for (const c of el.querySelectorAll('input[name="machine"]')) c.checked = checked.has(c.value);
    }
  } catch (e) {
    // The server is away (restarting); the stream's reconnection retries.
  } finally {
    live.busy = false;
    if (live.again) { live.again = false; setTimeout(() => refreshLive(false), 200); }
  }
}

function startStream() {
  if (!document.querySelector("[data-live]") || !window.EventSource) return;
  const es = new EventSource("/MAAS/stream");
  es.addEventListener("change", (ev) => {
    live.latest = ev.data;
    refreshLive(false);
  });
  window.addEventListener("pagehide", () => es.close());
}

// ---- machine actions ----------------------------------------------------

// act runs one MAAS operation on one machine; delete is a DELETE. A
// deploy takes the image chosen beside the button (osystem/series).
function act(id, op, scope) {
  if (op === "delete") return api("DELETE", "machines/" + encodeURIComponent(id) + "/");
  const body = new URLSearchParams();
  const image = scope && scope.querySelector(".deploy-image");
  if (op === "deploy" && image && image.value) {
    // Images uploaded without an OS prefix are custom ones, as in MAAS.
    const v = image.value, slash = v.indexOf("/");
    body.set("osystem", slash < 0 ? "custom" : v.slice(0, slash));
    body.set("distro_series", slash < 0 ? v : v.slice(slash + 1));
  }
  return api("POST", "machines/" + encodeURIComponent(id) + "/?op=" + encodeURIComponent(op), body);
}

// Operations that stop or destroy something ask first, in the page: a
// box with the question and two buttons, answered by a click.
const risky = new Set(["delete", "release", "power_off", "abort"]);

function confirmOp(op, n, near) {
  if (!risky.has(op)) return Promise.resolve(true);
  return ask(op.replace("_", " ") + " " + n + " machine(s)?", "Yes, " + op.replace("_", " "), near);
}

function ask(question, yesLabel, near) {
  return new Promise((resolve) => {
    const box = document.createElement("div");
    box.className = "confirm";
    box.setAttribute("role", "alertdialog");
    const q = document.createElement("span");
    q.textContent = question;
    const yes = document.createElement("button");
    yes.type = "button"; yes.id = "confirm-yes"; yes.textContent = yesLabel;
    const no = document.createElement("button");
    no.type = "button"; no.id = "confirm-no"; no.className = "secondary"; no.textContent = "Cancel";
    box.append(q, yes, no);
    near.after(box);
    const done = (v) => { box.remove(); resolve(v); };
    yes.addEventListener("click", () => done(true));
    no.addEventListener("click", () => done(false));
    yes.focus();
  });
}

// The handlers below are delegated to the document: content refreshed in
// place (refreshMain) keeps working.
function setupBulk() {
  document.addEventListener("change", (ev) => {
    if (ev.target.matches("[data-select-all]")) {
      for (const c of document.querySelectorAll('input[name="machine"]')) c.checked = ev.target.checked;
    }
  });
  document.addEventListener("submit", async (ev) => {
    const form = ev.target.closest("form[data-bulk]");
    if (!form) return;
    ev.preventDefault();
    const op = form.querySelector('[name="op"]').value;
    const ids = [...document.querySelectorAll('input[name="machine"]:checked')].map(c => c.value);
    const out = form.querySelector(".bulk-result");
    if (!op || ids.length === 0) { out.textContent = "Choose an action and at least one machine."; return; }
    if (!(await confirmOp(op, ids.length, form))) return;
    out.textContent = op + ": working on " + ids.length + " machine(s)…";
    // A few at a time: the API serialises per machine anyway, and a
    // thousand parallel requests would only queue in the browser.
    const failed = [];
    let done = 0;
    const queue = ids.slice();
    async function worker() {
      while (queue.length) {
        const id = queue.shift();
        const r = await act(id, op, form);
        if (r.ok) done++; else failed.push(id + ": " + errorText(r));
      }
    }
    await Promise.all([worker(), worker(), worker(), worker()]);
    out.textContent = op + ": " + done + " done" + (failed.length ? ", " + failed.length + " refused — " + failed.join("; ") : "");
    out.classList.toggle("error", failed.length > 0);
    refreshLive(true);
  });
}

function setupMachineActions() {
  document.addEventListener("click", async (ev) => {
    const b = ev.target.closest("[data-machine] button[data-op]");
    if (!b) return;
    const box = b.closest("[data-machine]");
    const id = box.dataset.machine;
    const out = box.querySelector(".action-result");
    const op = b.dataset.op;
    if (!(await confirmOp(op, 1, box))) return;
    out.textContent = op + "…";
    out.classList.remove("error");
    const r = await act(id, op, box);
    if (r.ok && op === "delete") { location.href = "/MAAS/machines"; return; }
    out.textContent = r.ok ? op + ": asked" : op + " refused: " + errorText(r);
    out.classList.toggle("error", !r.ok);
    refreshLive(true);
  });
}

// ---- API forms ------------------------------------------------------------

// Forms with data-api="METHOD path" are sent to the API as they are; field
// errors come back next to the fields they concern ([data-error-for]).
function formBody(form) {
  const fd = new FormData(form);
  if (form.querySelector('input[type="file"]')) return fd;
  const body = new URLSearchParams();
  for (const [k, v] of fd.entries()) {
    const input = form.querySelector('[name="' + k + '"]');
    if (input && input.hasAttribute("data-split")) {
      for (const part of String(v).split(/[\s,]+/)) if (part) body.append(k, part);
    } else if (v !== "" || (input && input.hasAttribute("data-keep-empty"))) {
      // Empty fields are left out (an empty password keeps the old one),
      // unless empty means something, as "inherit" does.
      body.append(k, v);
    }
  }
  return body;
}

function showErrors(form, r) {
  for (const el of form.querySelectorAll("[data-error-for], [data-saved]")) el.textContent = "";
  const general = form.querySelector('[data-error-for="__all__"]');
  if (r.data && typeof r.data === "object" && !Array.isArray(r.data)) {
    for (const [field, msgs] of Object.entries(r.data)) {
      const el = form.querySelector('[data-error-for="' + CSS.escape(field) + '"]') || general;
      if (el) el.textContent += [].concat(msgs).join(" ");
    }
  } else if (general) {
    general.textContent = r.text || ("HTTP " + r.status);
  }
}

// refreshMain fetches the page again and replaces its <main> in place:
// the page keeps its stream and scroll position, and handlers (delegated
// to the document) keep working on the new content.
async function refreshMain() {
  const res = await fetch(location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } });
  if (res.status === 401) { toLogin(); return; }
  if (!res.ok) { location.reload(); return; }
  const doc = new DOMParser().parseFromString(await res.text(), "text/html");
  const fresh = doc.querySelector("main"), old = document.querySelector("main");
  if (fresh && old) old.replaceWith(fresh); else location.reload();
}

// apiPath fills a form's API path: {name} takes the value of the form's
// [data-path="name"] control, escaped; {+name} takes it as a path (a
// storage device's "blockdevices/3/partition/7"), letters, digits, -, _
// and / only. Those controls carry no name, so they stay out of the body.
// null when a control is empty or holds something else.
function apiPath(form, template) {
  let bad = false;
  const path = template.replace(/\{(\+?)(\w+)\}/g, (_, raw, k) => {
    const el = form.querySelector('[data-path="' + k + '"]');
    const v = el ? el.value : "";
    if (!v || (raw && !/^[\w\/-]+$/.test(v))) { bad = true; return ""; }
    return raw ? v : encodeURIComponent(v);
  });
  return bad ? null : path;
}

// Submits of forms with data-api are handled at the document, so forms
// that arrive with refreshed content are handled too.
function setupApiForms() {
  document.addEventListener("submit", async (ev) => {
    const form = ev.target.closest("form[data-api]");
    if (!form) return;
    ev.preventDefault();
    const [method, template] = form.dataset.api.split(" ");
    const path = apiPath(form, template);
    if (path === null) { showErrors(form, { status: 400, text: "Choose what to change first." }); return; }
    if (form.dataset.confirm && !(await ask(form.dataset.confirm, "Yes", form))) return;
    const button = form.querySelector('button[type="submit"]');
    if (button) button.disabled = true;
    for (const el of form.querySelectorAll("[data-error-for], [data-saved]")) el.textContent = "";
    try {
      const r = await api(method, path, formBody(form));
      if (!r.ok) { showErrors(form, r); return; }
      const then = form.dataset.then;
      if (then && r.data) {
        location.href = then.replace(/\{(\w+)\}/g, (_, k) => encodeURIComponent(r.data[k] ?? ""));
      } else if (form.dataset.after === "reload") {
        await refreshMain();
      } else {
        const saved = form.querySelector("[data-saved]");
        if (saved) saved.textContent = "Saved.";
      }
    } finally {
      if (button) button.disabled = false;
    }
  });
}

// ---- timeline -------------------------------------------------------------

// The choice to hide boot steps is kept in a cookie, so that the server
// leaves them out (a boot loop's hundreds of steps would otherwise push
// the lifecycle events out of the newest 200) on every machine page.
function setupTimeline() {
  document.addEventListener("change", (ev) => {
    if (!ev.target.matches("[data-hide-boot]")) return;
    const v = ev.target.checked ? "hide" : "show";
    document.cookie = "anvil_timeline_boot=" + v + "; path=/MAAS/; max-age=31536000; SameSite=Strict";
    refreshLive(true);
  });
}

document.addEventListener("DOMContentLoaded", () => {
  setupTimeline();
  setupBulk();
  setupMachineActions();
  setupApiForms();
  startStream();
});
