// "What I remember about you": the memory screen of a frontend, over the
// usermemory fact API. Plain JavaScript, no build step. Every stored value
// is shown with textContent, never as HTML.
"use strict";

// auth is the managed login of config.json ({url, clientId, scope}),
// null when the page asks for a token instead; signedIn says the token
// came from it. expiry is the timer of the token's end.
const state = { api: "", token: "", limits: null, facts: [], pending: [], editing: null, adminUser: "", auth: null, signedIn: false, expiry: 0 };
const $ = (id) => document.getElementById(id);

function show(el, on) { el.hidden = !on; }

function setStatus(text) { $("status").textContent = text; }

function setError(err) {
  if (err && err.sessionEnded) return; // sessionEnded has said it.
  const el = $("error");
  el.textContent = err ? (err.userMessage || err.detail || err.title || String(err)) : "";
  show(el, Boolean(err));
}

// claims decodes the token's payload, only to choose what to show; the API
// checks the token.
function claims(token) {
  try {
    const part = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(atob(part + "===".slice((part.length + 3) % 4)));
  } catch { return {}; }
}

function scopes(c) {
  const s = c.scope || c.scp || "";
  return Array.isArray(s) ? s : String(s).split(/\s+/);
}

// call sends one request to the fact API and returns the parsed body, or
// throws the problem+json body of an error.
// A token that has expired, or that the API refuses (401), ends the
// session: the page says so and asks for a new sign-in or token, and the
// call throws an error marked sessionEnded, which setError ignores.
async function call(method, path, body) {
  if (expired(state.token)) throw sessionEnded();
  const headers = { Authorization: "Bearer " + state.token };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(state.api.replace(/\/$/, "") + path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status === 401) throw sessionEnded();
  if (res.status === 204) return null;
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = { title: text }; }
  if (!res.ok) {
    const err = data || {};
    err.status = res.status;
    if (!err.title && err.message) err.title = err.message;
    throw err;
  }
  return data;
}

// words turns a canonical key into the words it names: "home_city"
// becomes "home city". label capitalises them for a heading: "Home city".
// The key itself is shown where a fact is edited.
function words(key) {
  return String(key).replace(/[_\-.]+/g, " ").trim() || String(key);
}

function label(key) {
  const w = words(key);
  return w[0].toLocaleUpperCase() + w.slice(1);
}

// when formats a time in the reader's own locale and time zone.
const when = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

function timeElement(iso) {
  const t = document.createElement("time");
  const d = new Date(iso);
  if (isNaN(d)) return t;
  t.dateTime = d.toISOString();
  t.textContent = when.format(d);
  return t;
}

// A validUntil is a calendar day ("YYYY-MM-DD", the last day a temporary
// fact holds), not an instant: it is written in the reader's locale, read
// in UTC so that no time zone moves it to another day, with the weekday
// ("until Fri 5 Dec" in British English) and the year only when it is not
// this year's.
const dayFormat = new Intl.DateTimeFormat(undefined, { weekday: "short", day: "numeric", month: "short", timeZone: "UTC" });
const dayYearFormat = new Intl.DateTimeFormat(undefined, { weekday: "short", day: "numeric", month: "short", year: "numeric", timeZone: "UTC" });

function dayElement(ymd) {
  const t = document.createElement("time");
  t.dateTime = ymd;
  const d = new Date(ymd + "T00:00:00Z");
  if (isNaN(d)) { t.textContent = ymd; return t; }
  t.textContent = (d.getUTCFullYear() === new Date().getUTCFullYear() ? dayFormat : dayYearFormat).format(d);
  return t;
}

// untilElement says until when a temporary fact holds.
function untilElement(ymd) {
  const span = document.createElement("span");
  span.className = "fact-until";
  span.append("until ", dayElement(ymd));
  return span;
}

// categoryNames name the special categories of personal data (GDPR
// Art. 9) the API gives a fact; the page's tests hold this list to the
// service's.
const categoryNames = {
  ethnic_origin: "Racial or ethnic origin", politics: "Political opinions", religion: "Religion or beliefs",
  union_membership: "Trade union membership", genetics: "Genetic data", biometrics: "Biometric data",
  health: "Health", sexual_life: "Sex life or orientation",
};

function categoryName(c) { return categoryNames[c] || (c ? label(c) : "Sensitive"); }

// quoteElement shows the user's own words a fact was learned from.
function quoteElement(text) {
  const q = document.createElement("span");
  q.className = "fact-evidence";
  q.textContent = "“" + text + "”";
  return q;
}

// provenance says, in words, why a fact is remembered and since when: for
// a fact learned in a conversation, the user's own words it rests on (its
// evidence) and the conversation, named by its title when the gateway gave
// one; else by the user's own hand or through the remember tool the user
// approved. A thread's ID is never the label: it is only the tooltip. own
// says the reader is the user (else an admin, who reads about the user).
function provenance(f, own) {
  const at = timeElement(f.updatedAt);
  if (f.evidence) {
    const where = f.sourceThreadTitle ? ` in “${f.sourceThreadTitle}” on ` : " in a conversation on ";
    return { parts: [own ? "You said: " : "The user said: ", quoteElement(f.evidence), where, at], tip: f.sourceThreadId ? "Thread " + f.sourceThreadId : "" };
  }
  switch (f.origin) {
    case "remember_tool":
      return { parts: [own ? "You asked me to remember this on " : "The user asked the assistant to remember this on ", at], tip: "" };
    case "conversation": {
      const title = f.sourceThreadTitle ? ` “${f.sourceThreadTitle}”` : "";
      return { parts: ["Learned in a conversation" + title + " on ", at], tip: f.sourceThreadId ? "Thread " + f.sourceThreadId : "" };
    }
    default:
      return { parts: [own ? "You set this on " : "Set by hand on ", at], tip: "" };
  }
}

// factItem returns a copy of the template with ID template filled with
// what every listed fact shows: its name (the key in a tooltip), its value,
// for a temporary fact its end date, and where it comes from (provenance,
// followed by the nodes of after). own says the reader is the user, who
// gets the item's buttons: each of actions is [selector, verb, onclick];
// an admin only reads, and the buttons are removed.
function factItem(template, f, own, after, actions) {
  const li = $(template).content.firstElementChild.cloneNode(true);
  li.dataset.key = f.key;
  const name = li.querySelector(".fact-label");
  name.textContent = label(f.key);
  name.title = f.key;
  li.querySelector(".fact-value").textContent = f.value;
  if (f.validUntil) li.querySelector(".fact-main").append(untilElement(f.validUntil));
  const meta = li.querySelector(".fact-meta");
  const p = provenance(f, own);
  meta.replaceChildren(...p.parts, ...after);
  if (p.tip) meta.title = p.tip;
  if (!own) {
    li.querySelector(".fact-actions").remove();
    return li;
  }
  for (const [selector, verb, onclick] of actions) {
    const button = li.querySelector(selector);
    // Each button says which fact it acts on: a screen reader hears
    // "Edit home city", not one "Edit" per row.
    button.setAttribute("aria-label", verb + " " + words(f.key));
    button.addEventListener("click", onclick);
  }
  return li;
}

// renderFacts lists the facts; editable says the reader is the user, who
// may edit or forget each.
function renderFacts(list, facts, editable) {
  list.replaceChildren(...facts.map((f) => factItem("fact-item", f, editable, [], [
    [".fact-edit", "Edit", () => startEdit(f)],
    [".fact-forget", "Forget", () => forget(f.key)],
  ])));
}

// renderPending lists the facts that wait for the user's yes: what the
// user said, the category that makes them wait, and when they are dropped.
// own says the reader is the user, who may keep or discard each; an admin
// only reads them.
function renderPending(list, pending, own) {
  list.replaceChildren(...pending.map((f) => {
    const dropped = [". Dropped on ", timeElement(f.pendingUntil), own ? " unless you keep it." : " unless the user keeps it."];
    const li = factItem("pending-item", f, own, dropped, [
      [".pending-keep", "Keep", () => answerPending(f.key, true)],
      [".pending-discard", "Discard", () => answerPending(f.key, false)],
    ]);
    li.querySelector(".fact-category").textContent = categoryName(f.category);
    return li;
  }));
}

function capsText(n, limits) {
  return limits ? `${n} of ${limits.maxFacts} facts` : `${n} facts`;
}

async function load() {
  try {
    const data = await call("GET", "/v1/me/facts");
    state.facts = data.facts;
    state.pending = data.pending || [];
    state.limits = data.limits;
    renderFacts($("facts"), data.facts, true);
    renderPending($("pending"), state.pending, true);
    show($("pending-card"), state.pending.length > 0);
    $("caps").textContent = capsText(data.facts.length, data.limits);
    show($("empty"), data.facts.length === 0);
    $("edit-value").maxLength = data.limits.maxFactChars * 2; // The API says when it is too long.
    setUntilRange();
    setStatus("");
  } catch (err) { setError(err); }
}

// setUntilRange lets the end date of a fact be from today (UTC, as the
// API counts) to a year ahead; the API refuses anything else.
function setUntilRange() {
  const day = (d) => d.toISOString().slice(0, 10);
  const today = new Date();
  $("edit-until").min = day(today);
  $("edit-until").max = day(new Date(today.getTime() + 366 * 86400000));
}

// answerPending is the user's yes (keep) or no (discard) to a pending fact.
async function answerPending(key, keep) {
  const path = "/v1/me/pending/" + encodeURIComponent(key);
  try {
    if (keep) await call("POST", path + "/keep");
    else await call("DELETE", path);
    await load();
    setStatus(keep ? `Kept “${label(key)}”: the assistant may use it from now on.` : `Discarded “${label(key)}”.`);
    $("caps").focus(); // The row and its buttons are gone: keep the keyboard in the page.
  } catch (err) { setError(err); }
}

function startEdit(f) {
  state.editing = f.key;
  $("edit-title").textContent = "Edit “" + label(f.key) + "”";
  $("edit-key").value = f.key;
  $("edit-key").readOnly = true;
  $("edit-value").value = f.value;
  $("edit-until").value = f.validUntil || "";
  show($("edit-cancel"), true);
  $("edit-value").focus();
}

function stopEdit() {
  state.editing = null;
  $("edit-title").textContent = "Remember something";
  $("edit-form").reset();
  $("edit-key").readOnly = false;
  show($("edit-cancel"), false);
  show($("edit-error"), false);
}

async function save(ev) {
  ev.preventDefault();
  const key = $("edit-key").value;
  const body = { value: $("edit-value").value };
  if ($("edit-until").value) body.validUntil = $("edit-until").value;
  show($("edit-error"), false);
  try {
    const data = await call("PUT", "/v1/me/facts/" + encodeURIComponent(key), body);
    stopEdit();
    await load();
    setStatus("Remembered “" + label(data.fact.key) + "”.");
  } catch (err) {
    if (err.sessionEnded) return;
    $("edit-error").textContent = err.userMessage || err.detail || err.title || "Could not save.";
    show($("edit-error"), true);
  }
}

async function forget(key) {
  try {
    await call("DELETE", "/v1/me/facts/" + encodeURIComponent(key));
    await load();
    setStatus("Forgot “" + label(key) + "”.");
    $("caps").focus(); // The row and its button are gone: keep the keyboard in the list.
  } catch (err) { setError(err); }
}

function confirmDialog(title, text, ok) {
  return new Promise((resolve) => {
    const d = $("confirm");
    $("confirm-title").textContent = title;
    $("confirm-text").textContent = text;
    $("confirm-ok").textContent = ok;
    d.addEventListener("close", () => resolve(d.returnValue === "ok"), { once: true });
    d.returnValue = "";
    d.showModal();
  });
}

async function forgetAll() {
  const n = state.facts.length;
  const yes = await confirmDialog("Forget everything?",
    `All ${n} facts remembered about you will be forgotten. The assistant will no longer know them in any conversation.`,
    "Forget everything");
  if (!yes) return;
  try {
    await call("DELETE", "/v1/me/facts");
    await load();
    setStatus("Everything was forgotten.");
  } catch (err) { setError(err); }
}

async function lookup(ev) {
  ev.preventDefault();
  const user = $("lookup-user").value.trim();
  setError(null);
  try {
    const data = await call("GET", "/v1/users/" + encodeURIComponent(user) + "/facts");
    state.adminUser = user;
    renderFacts($("admin-facts"), data.facts, false);
    renderPending($("admin-pending"), data.pending || [], false);
    show($("admin-pending-block"), (data.pending || []).length > 0);
    $("admin-caps").textContent = `${user}: ` + capsText(data.facts.length, data.limits);
    show($("admin-result"), true);
  } catch (err) { show($("admin-result"), false); setError(err); }
}

async function erase() {
  const user = state.adminUser;
  const yes = await confirmDialog(`Erase ${user}?`,
    `Erasure removes every fact remembered about ${user}, the record of which conversations were read, and everything else this service holds for them. ` +
    "Memory updates still on their way from earlier conversations will not bring anything back. This cannot be undone.",
    "Erase user");
  if (!yes) return;
  try {
    const data = await call("DELETE", "/v1/users/" + encodeURIComponent(user));
    const day = new Intl.DateTimeFormat(undefined, { dateStyle: "medium" });
    setStatus(`Erased ${user}: ${data.removedFacts} facts removed. ` +
      `Backups may hold their data until ${day.format(new Date(data.backupsUntil))}, ` +
      `and messages still queued until ${day.format(new Date(data.queuedMessagesUntil))}.`);
    show($("admin-result"), false);
  } catch (err) { setError(err); }
}

// selectTab shows one view; the button of the view shown is marked
// aria-current. The bar of views shows only when there are two.
function selectTab(admin) {
  const [on, off] = admin ? ["tab-admin", "tab-me"] : ["tab-me", "tab-admin"];
  $(on).setAttribute("aria-current", "page");
  $(off).removeAttribute("aria-current");
  show($("me"), !admin);
  show($("admin"), admin);
  setError(null);
}

// expired says the token's exp claim has passed; a token without one
// is left to the API.
function expired(token) {
  const exp = claims(token).exp;
  return typeof exp === "number" && exp * 1000 <= Date.now();
}

// sessionEnded hides every view of the facts and their buttons, forgets
// the token and asks for a new one: Sign in again with a managed login,
// else the token form. It returns the error the interrupted call throws.
function sessionEnded() {
  clearTimeout(state.expiry);
  state.token = "";
  sessionStorage.removeItem("usermemory");
  for (const id of ["me", "admin", "views", "sign-out"]) show($(id), false);
  setError(null);
  if (state.auth) {
    showSignIn(true);
  } else {
    show($("connect-ended"), true);
    show($("connect"), true);
    setStatus("The token has expired or was refused.");
  }
  return { sessionEnded: true };
}

// showSignIn offers to sign in; ended says a session just ended.
function showSignIn(ended) {
  $("signin-title").textContent = ended ? "Your sign-in has expired" : "Sign in";
  $("signin-text").textContent = ended
    ? "Sign in again to see, change or download what the assistant remembers about you."
    : "Sign in to see, change or download what the assistant remembers about you.";
  $("sign-in").textContent = ended ? "Sign in again" : "Sign in";
  show($("signin"), true);
  if (ended) {
    setStatus("Your sign-in has expired.");
    $("sign-in").focus(); // The buttons the keyboard was on are gone.
  }
}

function signOut() {
  clearTimeout(state.expiry);
  sessionStorage.removeItem("usermemory");
  if (state.signedIn) { location.assign(signOutURL(state.auth)); return; }
  state.token = "";
  for (const id of ["me", "admin", "views", "sign-out"]) show($(id), false);
  show($("connect"), true);
  setStatus("Signed out.");
}

// connect shows the facts of the holder of token; signedIn says it came
// from the managed login. The session ends by itself when the token does.
function connect(api, token, signedIn) {
  state.api = api;
  state.token = token;
  state.signedIn = Boolean(signedIn);
  sessionStorage.setItem("usermemory", JSON.stringify({ api, token, signedIn: state.signedIn }));
  for (const id of ["connect", "connect-ended", "signin"]) show($(id), false);
  show($("sign-out"), true);
  const c = claims(token);
  const admin = scopes(c).some((s) => s.endsWith("/admin") || s === "memory/admin");
  show($("tab-admin"), admin);
  show($("views"), admin);
  selectTab(false);
  clearTimeout(state.expiry);
  if (typeof c.exp === "number") {
    // setTimeout holds at most 2^31-1 ms (24.8 days); a longer token is checked at each call.
    const left = c.exp * 1000 - Date.now();
    if (left < 2147483647) state.expiry = setTimeout(sessionEnded, Math.max(left, 0));
  }
  load();
}

// readConfig returns config.json, or null when the page has none (a copy
// of the files served without it). The fact API is config's apiUrl, or
// the folder above the page's: the deployed page is /app/ of the API.
async function readConfig() {
  try {
    const res = await fetch("config.json");
    if (!res.ok) return null;
    const cfg = await res.json();
    cfg.apiUrl = cfg.apiUrl || new URL("..", location.href).href.replace(/\/$/, "");
    return cfg;
  } catch { return null; }
}

async function start() {
  $("edit-form").addEventListener("submit", save);
  $("edit-cancel").addEventListener("click", stopEdit);
  $("forget-all").addEventListener("click", forgetAll);
  $("lookup-form").addEventListener("submit", lookup);
  $("erase").addEventListener("click", erase);
  $("tab-me").addEventListener("click", () => selectTab(false));
  $("tab-admin").addEventListener("click", () => selectTab(true));
  $("sign-out").addEventListener("click", signOut);
  $("sign-in").addEventListener("click", () => beginSignIn(state.auth).catch(setError));
  $("connect-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    connect($("api-url").value, $("token").value.trim(), false);
  });

  const cfg = await readConfig();
  if (cfg && cfg.authUrl && cfg.clientId) state.auth = { url: cfg.authUrl.replace(/\/$/, ""), clientId: cfg.clientId, scope: cfg.scope || "" };
  const query = new URLSearchParams(location.search);
  if (state.auth && (query.has("code") || query.has("error"))) {
    try {
      connect(cfg.apiUrl, await finishSignIn(state.auth, query), true);
    } catch (err) { showSignIn(false); setError(err); }
    return;
  }
  const hash = new URLSearchParams(location.hash.slice(1));
  const saved = JSON.parse(sessionStorage.getItem("usermemory") || "null");
  const token = hash.get("token") || (saved && saved.token) || "";
  const api = hash.get("api") || (cfg && cfg.apiUrl) || (saved && saved.api) || "";
  if (hash.has("token")) history.replaceState(null, "", location.pathname); // Keep the token out of the address bar.
  if (api && token && !expired(token)) { connect(api, token, !hash.has("token") && saved && saved.signedIn); return; }
  if (token && state.auth) { sessionStorage.removeItem("usermemory"); showSignIn(true); return; }
  if (state.auth) { showSignIn(false); return; }
  $("api-url").value = api;
  show($("connect-ended"), Boolean(token));
  show($("connect"), true);
}

start();
