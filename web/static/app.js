// "What I remember about you": the memory screen of a frontend, over the
// usermemory fact API. Plain JavaScript, no build step. Every stored value
// is shown with textContent, never as HTML.
"use strict";

// auth is the managed login of config.json ({url, clientId, scope}),
// null when the page asks for a token instead; signedIn says the token
// came from it. expiry is the timer of the token's end. tokenCommand is
// config.json's command that mints a token ("" when it has none). loaded
// says a read of the user's facts succeeded with this token: until then
// no button that acts on them is shown. undo is the one forget that waits
// for its Undo window to pass ({key, value, timer}), null when none does.
const state = { api: "", token: "", limits: null, facts: [], pending: [], editing: null, adminUser: "", auth: null, signedIn: false, expiry: 0,
  tokenCommand: "", loaded: false, undo: null };
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
// throws the problem+json body of an error (with its status).
// A token that has expired, or that the API refuses (401, or 403: it lacks
// the scope), ends the session: the page says why and how to get a new
// one, and the call throws an error marked sessionEnded, which setError
// ignores. keepalive lets the request outlive the page (a forget sent as
// the tab closes).
async function call(method, path, body, keepalive) {
  if (expired(state.token)) throw sessionEnded(expiredReason(state.token));
  const headers = { Authorization: "Bearer " + state.token };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(state.api.replace(/\/$/, "") + path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body), keepalive: Boolean(keepalive),
  });
  if (res.status === 204) return null;
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = { title: text }; }
  if (res.status === 401 || res.status === 403) throw sessionEnded(refusedReason(res, data));
  if (!res.ok) {
    const err = data || {};
    err.status = res.status;
    if (!err.title && err.message) err.title = err.message;
    throw err;
  }
  return data;
}

// A fact is named by its key as stored ("home_city") everywhere: in the
// list, on its buttons, in the form and in every status, as the chat and
// the API name it.

// canonicalKey is memory.CanonicalKey in JavaScript: the key the API
// stores for a key typed by hand. Letters, decimal digits and combining
// marks are kept, lower-cased one by one (the simple case mapping, as Go's
// unicode.ToLower); every run of anything else between two kept
// characters becomes one "_", and leading or trailing runs go. The page's
// browser tests hold it to the Go function.
const keyRune = /^[\p{L}\p{Nd}\p{M}]$/u;

function canonicalKey(key) {
  let out = "";
  let sep = false;
  for (const ch of String(key)) {
    if (!keyRune.test(ch)) { sep = true; continue; }
    if (sep && out) out += "_";
    sep = false;
    out += lowerRune(ch);
  }
  return out;
}

// lowerRune lower-cases one character. JavaScript applies the full case
// mapping, which turns a few characters into two ("İ" into "i" and a dot
// above); Go's simple mapping keeps the first.
function lowerRune(ch) {
  const l = ch.toLowerCase();
  return String.fromCodePoint(l.codePointAt(0));
}

// keyCharsOK is memory.CheckKey: a key set by hand holds only what
// canonicalKey keeps, spaces, "-", "_" and ".".
function keyCharsOK(key) {
  for (const ch of String(key)) {
    if (!keyRune.test(ch) && !" -_.".includes(ch)) return false;
  }
  return true;
}

function capitalise(s) { return s ? s[0].toLocaleUpperCase() + s.slice(1) : s; }

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

// isDay reports whether s is a date alone, "YYYY-MM-DD", of a day the
// calendar has: what the API takes as a validUntil.
function isDay(s) {
  if (!/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(s)) return false;
  const d = new Date(s + "T00:00:00Z");
  return !isNaN(d) && d.toISOString().slice(0, 10) === s;
}

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

function categoryName(c) { return categoryNames[c] || (c ? capitalise(c.replace(/_/g, " ")) : "Sensitive"); }

// quoteElement shows the user's own words a fact was learned from.
function quoteElement(text) {
  const q = document.createElement("span");
  q.className = "fact-evidence";
  q.textContent = "“" + text + "”";
  return q;
}

// Times of the wording the chat shares: "said on 3 Dec at 19:31", "kept at
// 19:35" (the same day) or "kept on 4 Dec at 09:00", "will be dropped on
// Thu 10 Dec", each in the reader's locale and time zone, the year only
// when it is not this year's.
const dayMonth = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short" });
const dayMonthYear = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short", year: "numeric" });
const weekdayDay = new Intl.DateTimeFormat(undefined, { weekday: "short", day: "numeric", month: "short" });
const hourMinute = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });

function sameDay(a, b) { return a.toDateString() === b.toDateString(); }

// instantElement is a <time> of iso whose text is format(date).
function instantElement(iso, format) {
  const t = document.createElement("time");
  const d = new Date(iso);
  if (isNaN(d)) return t;
  t.dateTime = d.toISOString();
  t.textContent = format(d);
  return t;
}

// onDayAt writes "3 Dec at 19:31" (the year added when not this year's).
function onDayAt(d) {
  return (d.getFullYear() === new Date().getFullYear() ? dayMonth : dayMonthYear).format(d) + " at " + hourMinute.format(d);
}

function whenLine(parts) {
  const span = document.createElement("span");
  span.className = "fact-when";
  span.append(...parts);
  return span;
}

// saidLine says when a fact learned in a conversation was said (its
// saidAt) and, for a fact that waited for the user's yes (it has a
// category), when it was kept (updatedAt): "said on 3 Dec at 19:31, kept
// at 19:35". Without saidAt (an API or a fact from before it) the page
// says only what it knows: "learned on …" or "kept on …".
function saidLine(f) {
  const kept = Boolean(f.category);
  if (!f.saidAt) {
    return whenLine([kept ? "kept on " : "learned on ", instantElement(f.updatedAt, onDayAt)]);
  }
  const parts = ["said on ", instantElement(f.saidAt, onDayAt)];
  const said = new Date(f.saidAt);
  const at = new Date(f.updatedAt);
  if (kept && at > said) {
    if (sameDay(said, at)) parts.push(", kept at ", instantElement(f.updatedAt, (d) => hourMinute.format(d)));
    else parts.push(", kept on ", instantElement(f.updatedAt, onDayAt));
  }
  return whenLine(parts);
}

// pendingLine says when a pending fact was said and when it is dropped:
// "said on 3 Dec at 19:31; will be dropped on Thu 10 Dec unless you keep
// it" (learned on, without saidAt); own says the reader is the user.
function pendingLine(f, own) {
  const verb = f.origin === "imported" ? "imported on " : f.saidAt ? "said on " : "learned on ";
  const parts = [verb, instantElement(f.saidAt || f.updatedAt, onDayAt)];
  if (f.pendingUntil) {
    parts.push("; will be dropped on ", instantElement(f.pendingUntil, (d) => weekdayDay.format(d)),
      own ? " unless you keep it" : " unless the user keeps it");
  }
  return whenLine(parts);
}

// importedLine says when a kept imported fact was imported (its saidAt,
// the import's request) and kept: "imported on 3 Dec at 19:31, kept at
// 19:35".
function importedLine(f) {
  const parts = ["imported on ", instantElement(f.saidAt || f.updatedAt, onDayAt)];
  const said = new Date(f.saidAt);
  const at = new Date(f.updatedAt);
  if (f.saidAt && at > said) {
    if (sameDay(said, at)) parts.push(", kept at ", instantElement(f.updatedAt, (d) => hourMinute.format(d)));
    else parts.push(", kept on ", instantElement(f.updatedAt, onDayAt));
  }
  return whenLine(parts);
}

// provenance says, in words, why a fact is remembered: for a fact learned
// in a conversation, the user's own words it rests on (its evidence) and
// the conversation, named by its title when the gateway gave one, then
// when it was said (saidLine); else by the user's own hand or through the
// remember tool the user approved, and when. A thread's ID is never the
// label: it is only the tooltip. own says the reader is the user (else an
// admin, who reads about the user). pending says the fact waits for the
// user's yes: its line says when it is dropped instead.
function provenance(f, own, pending) {
  const at = timeElement(f.updatedAt);
  const tip = f.sourceThreadId ? "Thread " + f.sourceThreadId : "";
  if (f.origin === "imported") {
    // sourceThreadTitle is the source the user named, sourceThreadId the import.
    const from = f.sourceThreadTitle || "another assistant";
    const line = pending ? pendingLine(f, own) : importedLine(f);
    const said = f.evidence ? [`Imported from ${from}, whose list said: `, quoteElement(f.evidence)] : [`Imported from ${from}`];
    return { parts: [...said, line], tip: f.sourceThreadId ? "Import " + f.sourceThreadId : "" };
  }
  const line = pending ? pendingLine(f, own) : saidLine(f);
  if (f.evidence) {
    const where = f.sourceThreadTitle ? ` in “${f.sourceThreadTitle}”` : " in a conversation";
    return { parts: [own ? "You said: " : "The user said: ", quoteElement(f.evidence), where, line], tip };
  }
  switch (f.origin) {
    case "remember_tool":
      return { parts: [own ? "You asked me to remember this on " : "The user asked the assistant to remember this on ", at], tip: "" };
    case "conversation": {
      const title = f.sourceThreadTitle ? ` “${f.sourceThreadTitle}”` : "";
      return { parts: ["Learned in a conversation" + title, line], tip };
    }
    default:
      return { parts: [own ? "You set this on " : "Set by hand on ", at], tip: "" };
  }
}

// factItem returns a copy of the template with ID template filled with
// what every listed fact shows: its key as stored, its value, for a
// temporary fact its end date, and where it comes from (provenance,
// followed by the nodes of after). own says the reader is the user, who
// gets the item's buttons: each of actions is [selector, verb, onclick];
// an admin only reads, and the buttons are removed. pending says the fact
// waits for the user's yes.
function factItem(template, f, own, pending, after, actions) {
  const li = $(template).content.firstElementChild.cloneNode(true);
  li.dataset.key = f.key;
  li.querySelector(".fact-label").textContent = f.key;
  li.querySelector(".fact-value").textContent = f.value;
  if (f.validUntil) li.querySelector(".fact-main").append(untilElement(f.validUntil));
  const meta = li.querySelector(".fact-meta");
  const p = provenance(f, own, pending);
  meta.replaceChildren(...p.parts, ...after);
  if (p.tip) meta.title = p.tip;
  if (!own) {
    li.querySelector(".fact-actions").remove();
    return li;
  }
  for (const [selector, verb, onclick] of actions) {
    const button = li.querySelector(selector);
    // Each button says which fact it acts on: a screen reader hears
    // "Edit home_city", not one "Edit" per row.
    button.setAttribute("aria-label", verb + " " + f.key);
    button.addEventListener("click", onclick);
  }
  return li;
}

// historyElements say what a fact held before, newest first (its history
// from the API): "Was Lisbon until you said “I moved to Porto” in
// “Moving house” on 2 Dec", or "until you changed it on 2 Dec". own says
// the reader is the user, who gets a Restore button per value: it sets
// the old value by hand, which starts the fact afresh.
function historyElements(f, own) {
  return (f.history || []).map((p) => {
    const line = document.createElement("span");
    line.className = "fact-history";
    const you = own ? "you" : "the user";
    const parts = ["Was ", p.value, " until "];
    if (p.evidence) {
      parts.push(you + " said ", quoteElement(p.evidence), p.threadTitle ? ` in “${p.threadTitle}”` : " in a conversation");
    } else if (p.origin === "conversation") {
      parts.push("a conversation" + (p.threadTitle ? ` (“${p.threadTitle}”)` : "") + " changed it");
    } else if (p.origin === "remember_tool") {
      parts.push(you + " asked the assistant to remember the new value");
    } else {
      parts.push(you + " changed it");
    }
    parts.push(" on ", instantElement(p.replacedAt, (d) => (d.getFullYear() === new Date().getFullYear() ? dayMonth : dayMonthYear).format(d)));
    line.append(...parts);
    if (p.threadId) line.title = "Thread " + p.threadId;
    if (own) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "fact-restore";
      button.textContent = "Restore";
      button.setAttribute("aria-label", `Restore ${f.key} = ${p.value}`);
      button.addEventListener("click", () => restore(f, p));
      line.append(" ", button);
    }
    return line;
  });
}

// restore sets fact f back to its previous value p, by hand.
async function restore(f, p) {
  await settleForget();
  try {
    await call("PUT", "/v1/me/facts/" + encodeURIComponent(f.key), { value: p.value });
    await load();
    setStatus(`Restored ${f.key} = ${p.value} (it was ${f.value}).`);
  } catch (err) {
    if (err.sessionEnded) return;
    setError(err);
  }
}

// renderFacts lists the facts; editable says the reader is the user, who
// may edit or forget each. A fact whose forget waits for its Undo window
// is not listed.
function renderFacts(list, facts, editable) {
  const shown = facts.filter((f) => !(editable && state.undo && state.undo.key === f.key));
  list.replaceChildren(...shown.map((f) => factItem("fact-item", f, editable, false, historyElements(f, editable), [
    [".fact-edit", "Edit", () => startEdit(f)],
    [".fact-forget", "Forget", () => forget(f)],
  ])));
  return shown.length;
}

// renderPending lists the facts that wait for the user's yes: what the
// user said, the category that makes them wait, when they are dropped,
// and the stored fact of the same key (among facts) that Keep replaces.
// own says the reader is the user, who may keep or discard each; an admin
// only reads them.
function renderPending(list, pending, facts, own) {
  list.replaceChildren(...pending.map((f) => {
    const stored = facts.find((s) => s.key === f.key);
    const after = [];
    if (stored) {
      const line = whenLine([`Keep replaces ${stored.key} = ${stored.value}`]);
      line.classList.add("fact-replaces");
      after.push(line);
    }
    const li = factItem("pending-item", f, own, true, after, [
      [".pending-keep", "Keep", () => answerPending(f, true)],
      [".pending-discard", "Discard", () => answerPending(f, false)],
    ]);
    // An imported fact waits for review whatever its category: without one it has no label.
    if (f.category || f.origin !== "imported") li.querySelector(".fact-category").textContent = categoryName(f.category);
    else li.querySelector(".fact-category").remove();
    return li;
  }));
}

function capsText(n, limits) {
  return limits ? `${n} of ${limits.maxFacts} facts` : `${n} facts`;
}

// load reads the user's facts and shows them; the first read that
// succeeds shows the view of the facts and its buttons (state.loaded).
async function load() {
  try {
    const data = await call("GET", "/v1/me/facts");
    state.facts = data.facts;
    state.pending = data.pending || [];
    state.limits = data.limits;
    renderMine();
    await loadChanges();
    $("edit-value").maxLength = data.limits.maxFactChars * 2; // The API says when it is too long.
    setUntilRange();
    if (!state.loaded) {
      state.loaded = true;
      show($("me"), $("tab-me").getAttribute("aria-current") === "page");
      setStatus("");
    }
  } catch (err) {
    if (!state.loaded && !err.sessionEnded) setStatus("Could not read what I remember about you.");
    setError(err);
  }
}

// RECENT_DAYS is how far back the page lists what conversations changed.
const RECENT_DAYS = 7;

// loadChanges reads what each conversation the facts were learned in
// changed in the last RECENT_DAYS (GET /v1/me/threads/{id}/changes, one
// read each) and shows it at the top, newest first, each with Undo but a
// change whose earlier value is no longer kept (previousUnknown: its Undo
// would be refused, never a removal). A failure hides the list and says
// nothing more: the facts are shown.
async function loadChanges() {
  const since = new Date(Date.now() - RECENT_DAYS * 86400000).toISOString();
  const threads = threadsOf(state.facts, []).filter((t) => !t.imported); // An import is no conversation's change.
  const changes = [];
  try {
    for (const t of threads) {
      const data = await call("GET", "/v1/me/threads/" + encodeURIComponent(t.id) + "/changes?since=" + encodeURIComponent(since));
      for (const c of data.changes) changes.push({ ...c, thread: t });
    }
  } catch {
    changes.length = 0;
  }
  changes.sort((a, b) => (a.at === b.at ? (a.key < b.key ? -1 : 1) : a.at < b.at ? 1 : -1));
  $("changes").replaceChildren(...changes.map((c) => {
    const li = $("change-item").content.firstElementChild.cloneNode(true);
    li.dataset.key = c.key;
    li.dataset.thread = c.thread.id;
    li.querySelector(".change-text").textContent = c.previousUnknown
      ? `${c.key}: ${c.value} (the earlier value is no longer kept)`
      : c.previous === undefined ? `${c.key} = ${c.value}` : `${c.key}: ${c.previous} → ${c.value}`;
    const d = new Date(c.at);
    li.querySelector(".change-meta").textContent = "Learned in " + threadName(c.thread) + (isNaN(d) ? "" : " on " + onDayAt(d));
    const button = li.querySelector(".change-undo");
    if (c.previousUnknown) button.remove();
    else {
      button.setAttribute("aria-label", `Undo ${c.key} = ${c.value}`);
      button.addEventListener("click", () => undoChange(c));
    }
    return li;
  }));
  show($("changes-card"), changes.length > 0);
}

// undoChange undoes what a conversation set (POST
// /v1/me/threads/{id}/changes/{key}/undo): the fact back as it was, or
// the new fact gone; the status says which.
async function undoChange(c) {
  try {
    const data = await call("POST", "/v1/me/threads/" + encodeURIComponent(c.thread.id) + "/changes/" +
      encodeURIComponent(c.key) + "/undo");
    await load();
    if (data.restored !== undefined) setStatus(`Undone: ${data.key} is ${data.restored} again.`);
    else if (data.removed) setStatus(`Undone: I forgot ${data.key} = ${c.value}.`);
    else setStatus(`Nothing to undo: ${data.key} changed since.`);
    $("caps").focus(); // The row and its button are gone: keep the keyboard in the page.
  } catch (err) { setError(err); }
}

// renderMine shows state's facts and pending facts, without the fact
// whose forget waits for its Undo window, their count, and the
// conversations they were learned in.
function renderMine() {
  const n = renderFacts($("facts"), state.facts, true);
  // Imported facts wait in the import's review (import.js), by import.
  const said = state.pending.filter((f) => f.origin !== "imported");
  renderPending($("pending"), said, state.facts, true);
  show($("pending-card"), said.length > 0);
  renderImportReview();
  renderThreads();
  $("caps").textContent = capsText(n, state.limits);
  show($("empty"), n === 0);
}

// threadsOf groups the facts and pending facts learned in a conversation
// or an import by their thread (sourceThreadId: the thread, or the
// import, that last set or confirmed each), newest first: {id, title,
// keys, at, imported}, at being the newest time one of them was said (or
// learned), imported saying the "thread" is an import (its title the
// source). A kept import is forgotten as a conversation is.
function threadsOf(facts, pending) {
  const by = new Map();
  for (const f of [...facts, ...pending]) {
    if ((f.origin !== "conversation" && f.origin !== "imported") || !f.sourceThreadId) continue;
    const t = by.get(f.sourceThreadId) || { id: f.sourceThreadId, title: "", keys: [], at: "", imported: f.origin === "imported" };
    if (f.sourceThreadTitle) t.title = f.sourceThreadTitle;
    t.keys.push(f.key);
    const at = f.saidAt || f.updatedAt || "";
    if (at > t.at) t.at = at;
    by.set(t.id, t);
  }
  return [...by.values()].sort((a, b) => (a.at === b.at ? (a.id < b.id ? -1 : 1) : a.at < b.at ? 1 : -1));
}

// threadName names a conversation for people: “its title”, or, without
// one, when it taught what it did; never its ID. An import is the list of
// its source: "ChatGPT’s list".
function threadName(t) {
  if (t.imported) return (t.title || "another assistant") + "’s list";
  if (t.title) return "“" + t.title + "”";
  const d = new Date(t.at);
  return isNaN(d) ? "a conversation" : "the conversation of " + onDayAt(d);
}

// renderThreads lists the conversations the user's facts were learned
// in, each with what it taught and a button that forgets it.
function renderThreads() {
  // Imported facts still waiting are in the import's review, not here.
  const threads = threadsOf(state.facts.filter((f) => !(state.undo && state.undo.key === f.key)),
    state.pending.filter((f) => f.origin !== "imported"));
  $("threads").replaceChildren(...threads.map((t) => {
    const li = $("thread-item").content.firstElementChild.cloneNode(true);
    li.dataset.thread = t.id;
    li.querySelector(".thread-name").textContent = capitalise(threadName(t));
    li.querySelector(".thread-keys").textContent = "Taught me " + t.keys.join(", ");
    li.querySelector(".thread-keys").title = (t.imported ? "Import " : "Thread ") + t.id;
    const button = li.querySelector(".thread-forget");
    button.textContent = "Forget what I learned in " + threadName(t);
    button.addEventListener("click", () => forgetThread(t));
    return li;
  }));
  show($("threads-card"), threads.length > 0);
}

// forgetThread forgets, behind a question, what conversation t taught
// (DELETE /v1/me/threads/{id}/facts); the status says what the API
// forgot, or that there was nothing left to forget.
async function forgetThread(t) {
  await settleForget();
  const name = threadName(t);
  const yes = await confirmDialog(`Forget what I learned in ${name}?`,
    `${t.keys.join(", ")} will be forgotten. ` +
    (t.imported ? "" : "Memory updates still on their way from that conversation will not bring them back. ") +
    "What you set yourself stays.", "Forget");
  if (!yes) return;
  try {
    const data = await call("DELETE", "/v1/me/threads/" + encodeURIComponent(t.id) + "/facts");
    const gone = [...data.facts, ...data.pending].map((f) => `${f.key} = ${f.value}`);
    await load();
    setStatus(gone.length ? `Forgot what I learned in ${name}: ${gone.join(", ")}.` : `Nothing to forget: ${name} taught me nothing.`);
    $("caps").focus(); // The row and its button are gone: keep the keyboard in the page.
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

// answerPending is the user's yes (keep) or no (discard) to the pending
// fact f; the status says what the API did: kept, and which stored value
// it replaced; discarded; or nothing, when f no longer waits (404). The
// keyboard goes to the element of ID focusID when it still shows (the
// list the fact was in), else to the caps.
async function answerPending(f, keep, focusID) {
  await settleForget();
  const path = "/v1/me/pending/" + encodeURIComponent(f.key);
  const stored = state.facts.find((s) => s.key === f.key);
  let said;
  try {
    if (keep) {
      const data = await call("POST", path + "/keep");
      said = `Kept ${data.fact.key} = ${data.fact.value}` + (stored ? `; it replaced ${stored.key} = ${stored.value}.` : ": the assistant may use it from now on.");
    } else {
      await call("DELETE", path);
      said = `Discarded ${f.key} = ${f.value}.`;
    }
  } catch (err) {
    if (err.status !== 404) { setError(err); return; }
    said = keep ? `Nothing to keep: no pending ${f.key}.` : `Nothing to discard: no pending ${f.key}.`;
  }
  await load();
  setStatus(said);
  // The row and its buttons are gone: keep the keyboard in the page.
  const next = focusID && $(focusID);
  (next && next.checkVisibility() ? next : $("caps")).focus();
}

function startEdit(f) {
  state.editing = f.key;
  $("edit-title").textContent = "Edit " + f.key;
  $("edit-key").value = f.key;
  $("edit-key").readOnly = true;
  $("edit-value").value = f.value;
  $("edit-until").value = f.validUntil || "";
  keyHint();
  show($("edit-cancel"), true);
  $("edit-value").focus();
}

function stopEdit() {
  state.editing = null;
  $("edit-title").textContent = "Remember something";
  $("edit-form").reset();
  $("edit-key").readOnly = false;
  keyHint();
  show($("edit-cancel"), false);
  show($("edit-error"), false);
}

// keyHint says, under the key being typed, the key the API will store
// (canonicalKey) when it differs, or that the API will refuse it.
function keyHint() {
  const typed = $("edit-key").value;
  const stored = canonicalKey(typed);
  let text = "";
  if (!keyCharsOK(typed)) text = "A key can hold letters, digits, spaces, hyphens, underscores and dots only.";
  else if (stored && stored !== typed) text = "Will be stored as " + stored;
  $("edit-key-hint").textContent = text;
  show($("edit-key-hint"), text !== "");
}

// save sets the form's fact; the status names the key as stored and says
// whether a value was replaced.
async function save(ev) {
  ev.preventDefault();
  await settleForget();
  const key = $("edit-key").value;
  const body = { value: $("edit-value").value };
  const until = $("edit-until").value;
  if (until && !isDay(until)) {
    // A browser without a date input lets any text through: only a date is sent.
    $("edit-error").textContent = "Give the last day as a date, like 2026-12-31.";
    show($("edit-error"), true);
    return;
  }
  if (until) body.validUntil = until;
  show($("edit-error"), false);
  try {
    const data = await call("PUT", "/v1/me/facts/" + encodeURIComponent(key), body);
    const before = state.facts.find((f) => f.key === data.fact.key);
    stopEdit();
    await load();
    const set = `${data.fact.key} = ${data.fact.value}`;
    setStatus(before ? (before.value === data.fact.value ? `Saved ${set} (the value is unchanged).` : `Changed ${set} (it was ${before.value}).`) : `Remembered ${set}.`);
  } catch (err) {
    if (err.sessionEnded) return;
    $("edit-error").textContent = err.userMessage || err.detail || err.title || "Could not save.";
    show($("edit-error"), true);
  }
}

// undoSeconds is how long a single forget can be undone: the DELETE waits
// that long, with an Undo button (README.md, "The memory page", says why undo rather than
// a question).
const undoSeconds = 5;

// forget takes fact f out of the list and forgets it after undoSeconds
// unless Undo is pressed first. One forget waits at a time: a second one,
// or any other change, sends the first now.
async function forget(f) {
  await settleForget();
  state.undo = { key: f.key, value: f.value, timer: setTimeout(settleForget, undoSeconds * 1000) };
  renderMine();
  $("undo-text").textContent = `${f.key} will be forgotten in ${undoSeconds} seconds.`;
  $("undo-button").setAttribute("aria-label", "Undo: keep " + f.key);
  show($("undo"), true);
  setStatus("");
  $("undo-button").focus(); // The row and its button are gone: Enter undoes.
}

// undoForget keeps the fact whose forget waits: nothing was sent.
function undoForget() {
  const u = state.undo;
  if (!u) return;
  clearTimeout(u.timer);
  state.undo = null;
  renderMine();
  closeUndo();
  setStatus(`Not forgotten: ${u.key} = ${u.value} is kept.`);
  const button = document.querySelector(`#facts li[data-key="${CSS.escape(u.key)}"] .fact-forget`);
  if (button) button.focus();
}

// closeUndo hides the Undo bar, keeping the keyboard in the page.
function closeUndo() {
  if ($("undo").contains(document.activeElement)) $("caps").focus();
  show($("undo"), false);
}

// settleForget sends the forget that waits, if any, now, and says what
// the API did. leaving says the page is going away: the request is sent
// with keepalive, which lets it complete after the page is gone, and
// nothing more is shown.
async function settleForget(leaving) {
  const u = state.undo;
  if (!u) return;
  clearTimeout(u.timer);
  state.undo = null;
  const sent = call("DELETE", "/v1/me/facts/" + encodeURIComponent(u.key), undefined, true);
  if (leaving) { sent.catch(() => {}); return; }
  closeUndo();
  let said = `Forgot ${u.key}.`;
  try { await sent; } catch (err) {
    if (err.sessionEnded) return;
    if (err.status !== 404) { setError(err); await load(); return; }
    said = `Nothing to forget: no fact ${u.key}.`;
  }
  await load();
  setStatus(said);
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

// forgetAll forgets every fact, behind a question; the status counts the
// facts forgotten and the pending facts, which still wait.
async function forgetAll() {
  await settleForget();
  const n = state.facts.length;
  const yes = await confirmDialog("Forget everything?",
    `All ${n} facts remembered about you will be forgotten. The assistant will no longer know them in any conversation.`,
    "Forget everything");
  if (!yes) return;
  try {
    await call("DELETE", "/v1/me/facts");
    await load();
    const waiting = state.pending.length ? ` ${state.pending.length} waiting for your yes still wait.` : "";
    setStatus(`Forgot all ${n} facts.` + waiting);
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
    renderPending($("admin-pending"), data.pending || [], data.facts, false);
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
// aria-current. The bar of views shows only when there are two. The
// user's own view shows once a read of the facts succeeded.
function selectTab(admin) {
  const [on, off] = admin ? ["tab-admin", "tab-me"] : ["tab-me", "tab-admin"];
  $(on).setAttribute("aria-current", "page");
  $(off).removeAttribute("aria-current");
  show($("me"), !admin && state.loaded);
  show($("admin"), admin);
  setError(null);
}

// expired says the token's exp claim has passed; a token without one
// is left to the API.
function expired(token) {
  const exp = claims(token).exp;
  return typeof exp === "number" && exp * 1000 <= Date.now();
}

// expiredReason says when token expired: "your token expired at 19:31"
// (on another day: "on 3 Dec at 19:31").
function expiredReason(token) {
  const at = new Date(claims(token).exp * 1000);
  return "your token expired " + (sameDay(at, new Date()) ? "at " + hourMinute.format(at) : "on " + onDayAt(at));
}

// refusedReason says why the API refused the token, from its answer res
// and body data: API Gateway's authorizer answers {"message":
// "Unauthorized"} (401) or "Forbidden" (403, a scope the token lacks);
// the API's own answer is problem+json.
function refusedReason(res, data) {
  if (expired(state.token)) return expiredReason(state.token);
  const why = (data && (data.userMessage || data.detail || data.message || data.title)) || String(res.status);
  return `the API refused the token: ${why} (${res.status})`;
}

// isAdminScope says scope s is the admin scope of the fact API.
function isAdminScope(s) { return s.endsWith("/admin") || s === "memory/admin"; }

// shellWord quotes s for a POSIX shell when it holds anything but
// characters that never need quoting.
function shellWord(s) {
  return /^[A-Za-z0-9\-_./:=@+,]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\\''") + "'";
}

// mintCommand is config.json's tokenCommand for the holder of the token
// that ended (its claims c): --user set to its subject, --admin added
// when it had the admin scope.
function mintCommand(c) {
  let cmd = state.tokenCommand;
  if (!cmd) return "";
  if (typeof c.sub === "string" && c.sub) cmd = cmd.replace(/--user\s+\S+/, () => "--user " + shellWord(c.sub));
  if (scopes(c).some(isAdminScope) && !/--admin\b/.test(cmd)) cmd += " --admin";
  return cmd;
}

// sessionEnded hides every view of the facts and their buttons, forgets
// the token and asks for a new one, saying why (reason): Sign in again
// with a managed login, else the token form with the command that mints
// one. A forget still waiting for its Undo window cannot be sent any
// more: the page says so. It returns the error the interrupted call
// throws.
function sessionEnded(reason) {
  const ended = claims(state.token);
  clearTimeout(state.expiry);
  let lost = "";
  if (state.undo) {
    clearTimeout(state.undo.timer);
    lost = ` ${state.undo.key} was not forgotten.`;
    state.undo = null;
  }
  show($("undo"), false);
  state.token = "";
  state.loaded = false;
  sessionStorage.removeItem("usermemory");
  for (const id of ["me", "admin", "views", "sign-out"]) show($(id), false);
  setError(null);
  if (state.auth) showSignIn(reason, lost);
  else showConnect(reason, ended, lost);
  return { sessionEnded: true };
}

// showConnect asks for a token; reason, when not empty, says why the last
// one ended, and the command that mints a new one for the holder of the
// claims ended is shown when config.json has one; lost says what did not
// happen because of it.
function showConnect(reason, ended, lost) {
  $("api-url").value = $("api-url").value || state.api;
  const why = reason ? capitalise(reason) + "." + (lost || "") : "";
  $("connect-ended").textContent = why;
  show($("connect-ended"), Boolean(why));
  const cmd = mintCommand(ended || {});
  $("connect-command").textContent = cmd;
  show($("connect-mint"), Boolean(cmd));
  show($("connect"), true);
  if (why) {
    setStatus(why);
    $("connect-title").focus(); // The buttons the keyboard was on are gone.
  }
}

// showSignIn offers to sign in; reason, when not empty, says why the
// session just ended, and lost what did not happen because of it.
function showSignIn(reason, lost) {
  const ended = Boolean(reason);
  const expiredNow = ended && reason.startsWith("your token expired");
  $("signin-title").textContent = !ended ? "Sign in" : expiredNow ? "Your sign-in has expired" : "Sign in again";
  $("signin-text").textContent = (ended ? capitalise(reason) + "." + (lost || "") + " Sign in again" : "Sign in") +
    " to see, change or download what the assistant remembers about you.";
  $("sign-in").textContent = ended ? "Sign in again" : "Sign in";
  show($("signin"), true);
  if (ended) {
    setStatus((expiredNow ? "Your sign-in has expired: " : "Your sign-in ended: ") + reason + "." + (lost || ""));
    $("sign-in").focus(); // The buttons the keyboard was on are gone.
  }
}

async function signOut() {
  await settleForget();
  clearTimeout(state.expiry);
  sessionStorage.removeItem("usermemory");
  if (state.signedIn) { location.assign(signOutURL(state.auth)); return; }
  state.token = "";
  state.loaded = false;
  for (const id of ["me", "admin", "views", "sign-out"]) show($(id), false);
  showConnect("", null);
  setStatus("Signed out.");
}

// connect shows the facts of the holder of token; signedIn says it came
// from the managed login. The session ends by itself when the token does.
// Nothing that acts on the facts shows until they are read (load).
function connect(api, token, signedIn) {
  state.api = api;
  state.token = token;
  state.signedIn = Boolean(signedIn);
  state.loaded = false;
  sessionStorage.setItem("usermemory", JSON.stringify({ api, token, signedIn: state.signedIn }));
  for (const id of ["connect", "connect-ended", "signin", "admin-result"]) show($(id), false);
  stopEdit(); // Nothing of an earlier token's session stays.
  show($("sign-out"), true);
  const c = claims(token);
  const admin = scopes(c).some(isAdminScope);
  show($("tab-admin"), admin);
  show($("views"), admin);
  selectTab(false);
  setStatus("Reading what I remember about you…");
  clearTimeout(state.expiry);
  if (typeof c.exp === "number") {
    // setTimeout holds at most 2^31-1 ms (24.8 days); a longer token is checked at each call.
    const left = c.exp * 1000 - Date.now();
    if (left < 2147483647) state.expiry = setTimeout(() => sessionEnded(expiredReason(token)), Math.max(left, 0));
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

function listen() {
  $("edit-form").addEventListener("submit", save);
  $("edit-cancel").addEventListener("click", stopEdit);
  $("edit-key").addEventListener("input", keyHint);
  $("forget-all").addEventListener("click", forgetAll);
  $("undo-button").addEventListener("click", undoForget);
  $("lookup-form").addEventListener("submit", lookup);
  $("erase").addEventListener("click", erase);
  $("tab-me").addEventListener("click", () => selectTab(false));
  $("tab-admin").addEventListener("click", () => selectTab(true));
  $("sign-out").addEventListener("click", signOut);
  $("sign-in").addEventListener("click", () => beginSignIn(state.auth).catch(setError));
  listenImport();
  $("connect-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    connect($("api-url").value, $("token").value.trim(), false);
  });
  // A forget still in its Undo window when the tab closes or navigates
  // away is sent then, with keepalive.
  addEventListener("pagehide", () => { settleForget(true); });
}

async function start() {
  listen();
  const cfg = await readConfig();
  if (cfg && cfg.authUrl && cfg.clientId) state.auth = { url: cfg.authUrl.replace(/\/$/, ""), clientId: cfg.clientId, scope: cfg.scope || "" };
  state.tokenCommand = (cfg && cfg.tokenCommand) || "";
  setupImport(cfg);
  const query = new URLSearchParams(location.search);
  if (state.auth && (query.has("code") || query.has("error"))) {
    try {
      connect(cfg.apiUrl, await finishSignIn(state.auth, query), true);
    } catch (err) { showSignIn(""); setError(err); }
    return;
  }
  const hash = new URLSearchParams(location.hash.slice(1));
  const saved = JSON.parse(sessionStorage.getItem("usermemory") || "null");
  const token = hash.get("token") || (saved && saved.token) || "";
  const api = hash.get("api") || (cfg && cfg.apiUrl) || (saved && saved.api) || "";
  if (hash.has("token")) history.replaceState(null, "", location.pathname); // Keep the token out of the address bar.
  if (api && token && !expired(token)) { connect(api, token, !hash.has("token") && saved && saved.signedIn); return; }
  const ended = token && expired(token) ? expiredReason(token) : "";
  if (ended) sessionStorage.removeItem("usermemory");
  if (state.auth) { showSignIn(ended); return; }
  $("api-url").value = api;
  if (token && !ended) $("token").value = token; // No API URL to use it with yet.
  showConnect(ended, ended ? claims(token) : null);
}

start();
